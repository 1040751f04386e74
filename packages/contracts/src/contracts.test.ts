import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type {
  AgentdErrorOptions,
  AgentTool,
  AgentTurnRequest,
  AgentTurnResult,
  AgentTurnRunner,
  DefineTool,
  ErrorKind,
  EventSink,
  Logger,
  ProblemFields,
  ToolContext,
} from './index.js';

/** The shape of pino's log methods (overloaded, loosely typed), without depending on pino. */
interface PinoLogFn {
  <T extends object>(fields: T, message?: string, ...args: unknown[]): void;
  (fields: unknown, message?: string, ...args: unknown[]): void;
  (message: string, ...args: unknown[]): void;
}

interface PinoLike {
  debug: PinoLogFn;
  info: PinoLogFn;
  warn: PinoLogFn;
  error: PinoLogFn;
  isLevelEnabled(level: string): boolean;
  child(bindings: Record<string, unknown>): PinoLike;
}

/** Mirrors @agentd/logging's module logger: its own field dictionary, a narrower level name. */
interface StrictModuleLogger {
  debug(fields: { durationMs?: number; [field: string]: unknown }, message?: string): void;
  info(fields: { durationMs?: number; [field: string]: unknown }, message?: string): void;
  warn(fields: Record<string, unknown> & { hint: string; errorKind: ErrorKind }, message?: string): void;
  error(fields: Record<string, unknown> & { hint: string; errorKind: ErrorKind }, message?: string): void;
  isLevelEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
  child(bindings: Record<string, unknown>): StrictModuleLogger;
}

const ignore = (): void => {};
const logger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

describe('Logger', () => {
  it('demands hint and errorKind on warn and error, and the error under err', () => {
    // @ts-expect-error warn without hint and errorKind does not compile
    logger.warn({ reason: 'slow' }, 'degraded');
    // @ts-expect-error error without errorKind does not compile
    logger.error({ hint: 'retry later' }, 'failed');
    // @ts-expect-error errorKind outside the contract's list does not compile
    logger.warn({ hint: 'free disk space', errorKind: 'disk' }, 'bad kind');
    // @ts-expect-error the error goes under err, never error
    logger.error({ hint: 'check the file', errorKind: 'resource', error: new Error('x') }, 'failed');
    const problem: ProblemFields = { hint: 'check the file', errorKind: 'resource', err: new Error('boom') };
    logger.error(problem, 'failed');
    logger.info({ anyField: { nested: true } }, 'other levels take any fields');
    expectTypeOf<Parameters<Logger['warn']>[0]>().toEqualTypeOf<ProblemFields>();
  });

  it('is satisfied by a pino-shaped logger and by a logger that itself demands hint and errorKind', () => {
    expectTypeOf<PinoLike>().toExtend<Logger>();
    expectTypeOf<StrictModuleLogger>().toExtend<Logger>();
  });

  it('needs only the four level methods; child and isLevelEnabled are optional', () => {
    expectTypeOf<{ debug(): void; info(): void; warn(): void; error(): void }>().toExtend<Logger>();
    expectTypeOf<{ debug(): void; info(): void; warn(): void }>().not.toExtend<Logger>();
  });
});

describe('ErrorKind', () => {
  it('is a closed list of names', () => {
    expectTypeOf<'platform'>().toExtend<ErrorKind>();
    expectTypeOf<'dependency'>().toExtend<ErrorKind>();
    expectTypeOf<'disk'>().not.toExtend<ErrorKind>();
    expectTypeOf<string>().not.toExtend<ErrorKind>();
  });
});

describe('AgentdErrorOptions', () => {
  it('takes an optional cause and optional record data, and lets a package narrow data', () => {
    expectTypeOf<{}>().toExtend<AgentdErrorOptions>();
    expectTypeOf<{ cause: Error; data: { id: string } }>().toExtend<AgentdErrorOptions>();
    expectTypeOf<{ data: string }>().not.toExtend<AgentdErrorOptions>();
    expectTypeOf<{ data: string }>().toExtend<AgentdErrorOptions<unknown>>();
    expectTypeOf<AgentdErrorOptions<{ issues?: string[] }>['data']>().toEqualTypeOf<
      { issues?: string[] } | undefined
    >();
  });
});

describe('EventSink', () => {
  it('takes an event name and a record payload', () => {
    expectTypeOf<EventSink['emit']>().parameters.toEqualTypeOf<[string, Record<string, unknown>]>();
  });
});

describe('AgentTurnRunner', () => {
  it('is satisfied by a runner whose result says more than the contract', () => {
    interface RichRunner {
      runTurn(
        request: AgentTurnRequest,
      ): Promise<AgentTurnResult & { endReason: 'completed'; steps: number }>;
    }
    expectTypeOf<RichRunner>().toExtend<AgentTurnRunner>();
    // @ts-expect-error an origin outside the closed list does not compile
    const request: AgentTurnRequest = { message: 'hi', origin: 'email' };
    expectTypeOf(request).toEqualTypeOf<AgentTurnRequest>();
  });
});

describe('AgentTool', () => {
  it('lets a tool with typed params join a list of tools without a cast', () => {
    const search: AgentTool<{ query: string }> = {
      name: 'memory_search',
      description: 'Finds memories.',
      params: z.object({ query: z.string() }),
      handler: async (params: { query: string }, context: ToolContext) => ({
        params,
        agent: context.agentId,
      }),
    };
    const tools: AgentTool[] = [search];
    expectTypeOf(tools).toEqualTypeOf<AgentTool[]>();
  });
});

describe('DefineTool', () => {
  it("types a tool's handler params as what its schema parses to", async () => {
    const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });
    const made = tool(
      'echo',
      'Echoes.',
      z.object({ text: z.string(), times: z.number().optional() }),
      (params) => {
        expectTypeOf(params).toEqualTypeOf<{ text: string; times?: number | undefined }>();
        return Promise.resolve(params.text);
      },
    );
    expectTypeOf(made).toEqualTypeOf<AgentTool>();
    const context: ToolContext = { agentId: 'a', sessionKey: 's', signal: new AbortController().signal };
    expect(await made.handler({ text: 'hi' }, context)).toBe('hi');
  });
});
