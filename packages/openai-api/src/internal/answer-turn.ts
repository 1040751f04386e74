import type { ServerResponse } from 'node:http';
import { agentOfModel } from '../chat.js';
import { isOpenAiApiError, OpenAiApiError } from '../errors.js';
import type { ChatTurn, ChatTurnResult, TurnParts } from '../types.js';
import { type ChunkStream, createChunkStream } from './chunk-stream.js';
import type { ApiContext } from './context.js';
import { toApiError } from './failure.js';
import { sendJson } from './http.js';

/** How an endpoint words a streamed turn on its stream (chunks for chat completions, events for responses). */
export interface StreamWording {
  /** Sends what opens the answer: once, before the first text, or before the finish of a turn without text. */
  open(): void;
  /** Sends one piece of the answer's text (never empty). */
  delta(text: string): void;
  /** Sends what ends a finished turn (finish, usage) and ends the stream. */
  finish(result: ChatTurnResult): void;
  /** Sends the failure of a turn whose stream is already open, and ends the stream. */
  fail(failure: OpenAiApiError): void;
}

/** How an endpoint answers one turn: its whole JSON body, and its wording when the request asked for a stream. */
export interface TurnAnswer {
  whole(result: ChatTurnResult): unknown;
  /** The endpoint's name of each turn field a backend's 400 may name (`images` is `messages` in chat). */
  params: Readonly<Record<string, string>>;
  /** Set for a streamed request: the wording over the stream of this response. */
  streamed?: ((stream: ChunkStream) => StreamWording) | undefined;
}

/**
 * The turn a request asks for: the agent its model names, its parts, and the session the
 * backend picks for the named session (`header`) or the request's `user`, else a fresh one.
 */
export async function turnOf<C>(
  ctx: ApiContext<C>,
  caller: C,
  asked: { model: string; user?: string | null | undefined },
  parts: TurnParts,
  header: string | undefined,
  signal: AbortSignal,
): Promise<ChatTurn> {
  const sessionKey = await ctx.backend.session(caller, { header, user: asked.user ?? undefined });
  return { ...parts, agentId: agentOfModel(asked.model), sessionKey, signal };
}

/**
 * Runs `turn` and answers it, whole or streamed. The stream is headed with the session key and
 * opens with the first delta, so a turn that fails before producing text (an unknown agent)
 * still gets its HTTP status: the error is thrown on. Once the stream is open the status is
 * sent, so OpenAI (and this) sends the error as an event. A client that stops reading while
 * more than `maxBufferedBytes` wait for it is cut off and its turn cancelled.
 */
export async function answerTurn<C>(
  ctx: ApiContext<C>,
  response: ServerResponse,
  caller: C,
  turn: ChatTurn,
  answer: TurnAnswer,
): Promise<void> {
  try {
    await runAnswer(ctx, response, caller, turn, answer);
  } catch (error) {
    throw renameParam(error, answer.params);
  }
}

/** A backend's 400 naming a turn field, reworded with the endpoint's name of the field. */
function renameParam(error: unknown, params: Readonly<Record<string, string>>): unknown {
  if (!isOpenAiApiError(error)) return error;
  const { param } = error.toBody().error;
  const renamed = param === null ? undefined : params[param];
  if (renamed === undefined) return error;
  return new OpenAiApiError(
    error.status,
    'invalid_request_error',
    error.code,
    `${renamed}: ${error.message}`,
    {
      param: renamed,
    },
  );
}

async function runAnswer<C>(
  ctx: ApiContext<C>,
  response: ServerResponse,
  caller: C,
  turn: ChatTurn,
  answer: TurnAnswer,
): Promise<void> {
  if (answer.streamed === undefined) {
    const result = await ctx.backend.chat(caller, turn);
    sendJson(response, 200, answer.whole(result), { 'x-agentd-session': result.sessionKey });
    return;
  }
  const overflow = new AbortController();
  const stream = createChunkStream(response, {
    headers: { 'x-agentd-session': turn.sessionKey },
    maxBufferedBytes: ctx.maxBufferedBytes,
    onOverflow: () => overflow.abort(),
  });
  const wording = answer.streamed(stream);
  const open = () => {
    if (!stream.opened) wording.open();
  };
  try {
    const result = await ctx.backend.chat(caller, {
      ...turn,
      signal: AbortSignal.any([turn.signal, overflow.signal]),
      onDelta: (text) => {
        if (text === '') return;
        open();
        wording.delta(text);
      },
    });
    open();
    wording.finish(result);
  } catch (error) {
    if (!stream.opened) throw error;
    wording.fail(toApiError(error, ctx.logger));
  }
}
