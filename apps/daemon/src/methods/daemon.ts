import { ownEntry } from '@agentd/input-guards';
import type { RootLogger } from '@agentd/logging';
import { isModuleName, LEVEL_VALUES, logLevelSchema } from '@agentd/logging';
import { z } from 'zod';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
import { auditAdminChange, methodsOf } from './define.js';

/**
 * daemon.setLogLevel: change one module's level at once; configured levels return on restart.
 * Each change is an `audit:event` of kind `config`: `medium` when the new level hides info
 * lines (warn and above silence the `audit` level too), `low` otherwise.
 */
export function daemonMethods(deps: {
  logger: RootLogger;
  /** Producer of the admin-change audit event. @default emits nothing */
  audit?: SecurityAudit;
}) {
  const audit = deps.audit ?? noopSecurityAudit;
  const { adminMethod } = methodsOf('daemon');
  return [
    adminMethod('setLogLevel', {
      description: "Set one module's log level until the next restart.",
      params: z
        .object({
          module: z
            .string()
            .refine(isModuleName, 'a module name: lower-case letters, digits, ., -, _; not a built-in name'),
          level: logLevelSchema,
        })
        .strict(),
      handler: ({ module, level }, context) => {
        const previous = ownEntry(deps.logger.levels(), module);
        deps.logger.setLevel(module, level);
        deps.logger
          .module('daemon')
          .info({ step: 'setLogLevel', reason: `${module}=${level}` }, 'log level changed');
        auditAdminChange(audit, context, LEVEL_VALUES[level] > LEVEL_VALUES.info ? 'medium' : 'low', {
          action: 'set_log_level',
          module,
          level,
          ...(previous ? { previous } : {}),
        });
        return { ok: true as const, module, level, ...(previous ? { previous } : {}) };
      },
    }),
  ];
}
