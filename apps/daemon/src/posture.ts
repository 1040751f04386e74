import type { Logger } from '@agentd/contracts';
import { checkServedWindows, type ProvidersSection } from '@agentd/agent-runtime';
import type { ObsEvidence } from '@agentd/obs-reports';

/** Options of {@link createPostureRecorder}. */
export interface PostureRecorderOptions {
  evidence: Pick<ObsEvidence, 'record'>;
  /** Where posture findings are logged (info, and warn with `hint` and `errorKind`). */
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The fetch used to ask local model servers. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * Records the standing configuration posture as a `config_posture` health row (fleet rule 7
 * reads the latest one): today the count of local providers serving a configured model with
 * a smaller context window than the config promises. Runs are serialised and a run asked for
 * while one is in flight is folded into one more run, so the latest config always wins.
 * There is no skills import in agentd, so `importedSkillsOutsideAllowlist` is never written
 * (a missing count folds to 0: no finding).
 */
export function createPostureRecorder(options: PostureRecorderOptions) {
  let running: Promise<void> | undefined;
  let pending: ProvidersSection | undefined;

  async function once(providers: ProvidersSection): Promise<void> {
    const posture = await checkServedWindows(providers, options.fetch ? { fetch: options.fetch } : {});
    options.evidence.record('config_posture', {
      servedBelowConfigured: posture.servedBelowConfigured,
      providersProbed: posture.providersProbed,
      providersUnreachable: posture.providersUnreachable,
      below: posture.below,
    });
    if (posture.servedBelowConfigured > 0) {
      options.logger.warn(
        {
          step: 'posture',
          itemCount: posture.servedBelowConfigured,
          errorKind: 'config',
          hint: 'lower contextWindow of these models to what the server serves, or raise the server’s window',
          below: posture.below,
        },
        'model served with a smaller context window than configured',
      );
    }
  }

  async function drain(): Promise<void> {
    while (pending) {
      const providers = pending;
      pending = undefined;
      await once(providers);
    }
  }

  return {
    /** Resolves when no check is in flight (shutdown waits for it before closing the evidence store). */
    idle(): Promise<void> {
      return running ?? Promise.resolve();
    },
    /** Checks `providers` (after any check in flight) and records the row; never rejects. */
    check(providers: ProvidersSection): Promise<void> {
      pending = providers;
      running ??= drain()
        .catch((err: unknown) =>
          options.logger.warn(
            { err, step: 'posture', errorKind: 'internal', hint: 'the posture row was not recorded' },
            'posture check failed',
          ),
        )
        .finally(() => {
          running = undefined;
        });
      return running;
    },
  };
}
