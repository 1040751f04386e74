import type { CapabilityClass } from './config.js';
import type { ContextBudget } from '@agentd/evidence';

/** The effective context window and where its cap came from. */
export interface ContextWindow {
  windowTokens: number;
  rawContextWindowTokens: number;
  windowCapSource: ContextBudget['windowCapSource'];
}

/**
 * The window a request may fill: the model's window, lowered for small and nano
 * providers by the `contextEngine.budget` caps, and by the agent's own cap.
 */
export function resolveContextWindow(input: {
  rawContextWindowTokens: number;
  capabilityClass: CapabilityClass | undefined;
  effectiveContextCapSmall: number;
  effectiveContextCapNano: number;
  agentMaxWindowTokens: number | undefined;
}): ContextWindow {
  let windowTokens = input.rawContextWindowTokens;
  let windowCapSource: ContextWindow['windowCapSource'] = 'none';
  if (input.capabilityClass === 'small' && input.effectiveContextCapSmall < windowTokens) {
    windowTokens = input.effectiveContextCapSmall;
    windowCapSource = 'effectiveContextCapSmall';
  } else if (input.capabilityClass === 'nano' && input.effectiveContextCapNano < windowTokens) {
    windowTokens = input.effectiveContextCapNano;
    windowCapSource = 'effectiveContextCapNano';
  }
  if (input.agentMaxWindowTokens !== undefined && input.agentMaxWindowTokens < windowTokens) {
    // An operator pin on the agent: the contract's name for operator pins is capabilityClass.
    windowTokens = input.agentMaxWindowTokens;
    windowCapSource = 'capabilityClass';
  }
  return { windowTokens, rawContextWindowTokens: input.rawContextWindowTokens, windowCapSource };
}

/** The pre-flight plan of one model call. */
export interface BudgetPlan {
  verdict: ContextBudget['verdict'];
  /** Output tokens the request may ask for. */
  outputHeadroom: number;
  /** Tokens left for history. */
  historyBudget: number;
}

/**
 * Plans one request: system and fresh tail are mandatory; output headroom is the model's
 * maximum when it fits (`fits`), else shrunk down to `minOutputTokens` (`downshifted`,
 * no history), else the request cannot be made (`exhausted`).
 */
export function planBudget(input: {
  windowTokens: number;
  systemTokens: number;
  freshTailTokens: number;
  maxOutputTokens: number;
  minOutputTokens: number;
}): BudgetPlan {
  const required = input.systemTokens + input.freshTailTokens;
  const free = input.windowTokens - required;
  const minOutput = Math.min(input.minOutputTokens, input.maxOutputTokens);
  if (free < minOutput) return { verdict: 'exhausted', outputHeadroom: Math.max(0, free), historyBudget: 0 };
  if (free < input.maxOutputTokens) return { verdict: 'downshifted', outputHeadroom: free, historyBudget: 0 };
  return {
    verdict: 'fits',
    outputHeadroom: input.maxOutputTokens,
    historyBudget: free - input.maxOutputTokens,
  };
}

/** Something with a token estimate and a role. */
export interface Budgeted {
  role: string;
  tokens: number;
}

/**
 * Keeps the newest messages (given newest first) that fit `budget`, stopping at the first
 * that does not so the kept history stays contiguous, then drops leading tool results whose
 * call was cut off. Returns them oldest first.
 */
export function selectHistory<T extends Budgeted>(
  newestFirst: readonly T[],
  budget: number,
): { kept: T[]; tokens: number } {
  let tokens = 0;
  let count = 0;
  for (const message of newestFirst) {
    if (tokens + message.tokens > budget) break;
    tokens += message.tokens;
    count++;
  }
  const kept = newestFirst.slice(0, count).reverse();
  while (kept.length > 0 && kept[0]?.role === 'tool') {
    tokens -= kept[0].tokens;
    kept.shift();
  }
  return { kept, tokens };
}
