import { z } from 'zod';
import { invalidOptions, type OptionIssue } from './internal/options.js';
import { toModelMessage } from './internal/messages.js';
import type { TurnState } from './internal/turn-state.js';
import type { TurnCapabilities } from './model-capabilities.js';
import type { ModelCallOptions, ModelProvider, ModelToolCall, ModelToolSpec } from './provider.js';
import type { NewMessage, SessionMessage } from './session-store.js';
import { estimateMessageTokens } from './tokens.js';
import type { TurnRequest } from './types.js';

/** A tool name as model APIs take it. */
const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (1 to 64)');

/** The fields of a turn request that a client of the model API brings (validated with the rest). */
export const clientTurnFields = {
  clientTools: z
    .array(
      z
        .object({
          name: toolName,
          description: z.string().max(100_000),
          inputSchema: z.record(z.string(), z.unknown()),
        })
        .strict(),
    )
    .max(128)
    .optional(),
  toolResults: z
    .array(
      z
        .object({
          toolCallId: z.string().min(1).max(256),
          content: z.string().max(1_000_000),
          isError: z.boolean().optional(),
        })
        .strict(),
    )
    .max(128)
    .optional(),
  images: z
    .array(z.object({ url: z.string().regex(/^(https?:|data:image\/)/i, 'an http(s) or data:image URL') }))
    .max(64)
    .optional(),
  callOptions: z
    .object({
      temperature: z.number().min(0).max(2).optional(),
      topP: z.number().min(0).max(1).optional(),
      stopSequences: z.array(z.string().min(1).max(1000)).max(16).optional(),
      seed: z.number().int().optional(),
      maxOutputTokens: z.number().int().positive().optional(),
      responseFormat: z
        .union([
          z.object({ type: z.literal('text') }).strict(),
          z
            .object({
              type: z.literal('json'),
              schema: z.record(z.string(), z.unknown()).optional(),
              name: z.string().min(1).max(64).optional(),
              description: z.string().max(10_000).optional(),
            })
            .strict(),
        ])
        .optional(),
      toolChoice: z
        .union([
          z.enum(['auto', 'none', 'required']),
          z.object({ toolName: z.string().min(1).max(200) }).strict(),
        ])
        .optional(),
    })
    .strict()
    .optional(),
};

/** A turn must carry something to answer: text, images or tool results. */
export function hasTurnContent(request: { message: string; images?: unknown[]; toolResults?: unknown[] }) {
  return (
    request.message.length > 0 || (request.images?.length ?? 0) > 0 || (request.toolResults?.length ?? 0) > 0
  );
}

/**
 * Refuses what the provider cannot honour, naming the field (`images`, `callOptions.responseFormat`,
 * `callOptions.toolChoice`), rather than dropping it; and a client tool named like an agent tool.
 */
export function checkClientTurn(
  request: TurnRequest,
  provider: ModelProvider,
  caps: TurnCapabilities,
  agentTools: ModelToolSpec[],
) {
  const issues: OptionIssue[] = [];
  const refuse = (path: (string | number)[], message: string) =>
    issues.push({ path, code: 'custom', message });
  if (!caps.images && (request.images?.length ?? 0) > 0) refuse(['images'], caps.imagesRefusal);
  const options = request.callOptions;
  const format = options?.responseFormat;
  if (format?.type === 'json' && format.schema && !caps.json) {
    refuse(['callOptions', 'responseFormat'], caps.jsonRefusal);
  } else if (format?.type === 'json' && !format.schema && !caps.jsonObject) {
    refuse(
      ['callOptions', 'responseFormat'],
      `provider ${provider.id} cannot be held to a JSON answer without a schema`,
    );
  }
  const choice = options?.toolChoice;
  if (!caps.forcedToolChoice && (choice === 'required' || typeof choice === 'object')) {
    refuse(['callOptions', 'toolChoice'], `provider ${provider.id} cannot be made to call a tool`);
  }
  const agentNames = new Set(agentTools.map((tool) => tool.name));
  const clientTools = request.clientTools ?? [];
  clientTools.forEach((tool, index) => {
    if (agentNames.has(tool.name)) {
      refuse(['clientTools', index, 'name'], `${tool.name} is the name of one of the agent's own tools`);
    }
  });
  if (typeof choice === 'object') {
    const known =
      agentNames.has(choice.toolName) || clientTools.some((tool) => tool.name === choice.toolName);
    if (!known) refuse(['callOptions', 'toolChoice'], `no tool named ${choice.toolName} is offered`);
  }
  if (issues.length > 0) throw invalidOptions('runTurn', issues);
}

/** The options of step `step`: `toolChoice` binds the first call (or every call when `none`). */
export function stepOptions(request: TurnRequest, step: number): ModelCallOptions | undefined {
  const options = request.callOptions;
  if (!options) return undefined;
  const { maxOutputTokens: _cap, toolChoice, ...rest } = options;
  const choice = step === 1 || toolChoice === 'none' ? toolChoice : undefined;
  return choice === undefined ? rest : { ...rest, toolChoice: choice };
}

/**
 * Client tool calls of the session's last turn that have no result yet: those its last stored
 * assistant message made and no later tool message answered.
 */
function pendingCalls(history: readonly SessionMessage[]): ModelToolCall[] {
  const answered = new Set<string>();
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history[index];
    if (message?.role === 'tool') answered.add(message.toolCallId ?? '');
    else if (message?.role === 'assistant') {
      return (message.toolCalls ?? []).filter((call) => !answered.has(call.toolCallId));
    } else return [];
  }
  return [];
}

/**
 * Puts the results of the session's pending client tool calls before this turn's message: the
 * ones the request brings, and for any it does not (the caller moved on) a result saying so, so
 * the history the model sees stays well formed. A result for no pending call is refused.
 */
export function settleClientCalls(state: TurnState): void {
  const pending = pendingCalls(state.history);
  const results = state.request.toolResults ?? [];
  const issues: OptionIssue[] = [];
  results.forEach((result, index) => {
    if (!pending.some((call) => call.toolCallId === result.toolCallId)) {
      issues.push({
        path: ['toolResults', index, 'toolCallId'],
        code: 'custom',
        message: `${result.toolCallId} answers no pending tool call of this session`,
      });
    }
  });
  if (issues.length > 0) throw invalidOptions('runTurn', issues);
  const settled: NewMessage[] = pending.map((call) => {
    const result = results.find((given) => given.toolCallId === call.toolCallId);
    const message: NewMessage = {
      role: 'tool',
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      content: result?.content ?? 'No result: the client did not run this tool call.',
      ...(result === undefined || result.isError ? { isError: true } : {}),
      tokens: 0,
    };
    message.tokens = estimateMessageTokens(toModelMessage(message));
    return message;
  });
  if (settled.length === 0) return;
  state.turnMessages.unshift(...settled);
  state.tail.unshift(...settled.map(toModelMessage));
  state.tailTokens += settled.reduce((sum, message) => sum + message.tokens, 0);
}

/** Splits a step's calls: the agent's own, run now, and the client's, which end the turn. */
export function splitClientCalls(state: TurnState, calls: ModelToolCall[]) {
  const names = new Set((state.request.clientTools ?? []).map((tool) => tool.name));
  return {
    own: calls.filter((call) => !names.has(call.toolName)),
    client: calls.filter((call) => names.has(call.toolName)),
  };
}
