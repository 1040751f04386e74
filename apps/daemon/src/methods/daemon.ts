import type { RootLogger } from '@agentd/logging';
import { logLevelSchema } from '@agentd/logging';
import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';

/** daemon.setLogLevel: change one module's level at once; configured levels return on restart. */
export function daemonMethods(deps: { logger: RootLogger }) {
  return [
    defineMethod({
      name: 'daemon.setLogLevel',
      scope: 'admin',
      description: "Set one module's log level until the next restart.",
      params: z.object({ module: z.string().min(1).max(64), level: logLevelSchema }).strict(),
      handler: ({ module, level }) => {
        const previous = deps.logger.levels()[module];
        deps.logger.setLevel(module, level);
        deps.logger
          .module('daemon')
          .info({ step: 'setLogLevel', reason: `${module}=${level}` }, 'log level changed');
        return { ok: true as const, module, level, ...(previous ? { previous } : {}) };
      },
    }),
  ];
}
