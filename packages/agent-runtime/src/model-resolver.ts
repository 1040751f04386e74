import { ownEntry } from '@agentd/input-guards';
import { createAnthropicProvider, createOpenAiCompatibleProvider } from './ai-sdk-provider.js';
import {
  type AgentDefinition,
  type ModelCapabilities,
  OFFLINE_PROVIDER_ID,
  type Prices,
  type ProviderEntry,
  providerEntrySchema,
} from './config.js';
import { AgentRuntimeError } from './errors.js';
import { createOfflineProvider } from './offline-provider.js';
import type { ModelProvider } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import type { ProviderFactory } from './runtime-options.js';

/** A provider as `models.list` shows it: never a key or header. */
export interface ProviderView {
  id: string;
  type: ProviderEntry['type'];
  offline: boolean;
  baseUrl?: string;
  apiKeyConfigured: boolean;
  capabilityClass?: string;
  contextWindow: number;
  maxOutputTokens: number;
  models: ModelView[];
}

/** A model as `models.list` shows it. */
export interface ModelView {
  id: string;
  provider: string;
  model: string;
  capabilityClass?: string;
  contextWindow: number;
  maxOutputTokens: number;
  prices: Prices;
}

/** The provider entry, model and limits one call uses. */
export interface ResolvedModel {
  providerId: string;
  entry: ProviderEntry;
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  prices: Prices;
  /** What the model takes as configured: its own pins over its provider's. */
  capabilities: ModelCapabilities;
}

/** An operation's own provider and model (e.g. `operations.compaction` of an agent). */
export interface OperationModel {
  provider?: string | undefined;
  model?: string | undefined;
}

/** Resolves agents' models to provider entries and builds (and caches) their providers. */
export interface ModelResolver {
  /** The entry of a provider id (the built-in `offline` when not configured). */
  providerEntry(providerId: string): ProviderEntry | undefined;
  /**
   * The model a call of `agent` uses: `override` (`model` or `<provider>/<model>`) first, then
   * the operation's own provider and model, then the agent's. Throws `PROVIDER_NOT_FOUND`.
   */
  resolve(agent: AgentDefinition, override: string | undefined, operation?: OperationModel): ResolvedModel;
  /** The provider of a resolved model, built once per entry (rebuilt when the entry changes). */
  provider(resolved: ResolvedModel): Promise<ModelProvider>;
  /** A fresh, uncached provider of a resolved model (for probing a change before it applies). */
  freshProvider(resolved: ResolvedModel): Promise<ModelProvider>;
  /** Configured providers and models, without keys. */
  list(): { providers: ProviderView[]; models: ModelView[] };
  /**
   * Drops every built provider, so the next call resolves its key again: a secret a
   * `${secret:NAME}` key names may have a new value while the entry itself is unchanged.
   */
  forgetProviders(): void;
}

/** A `${secret:NAME}` reference inside a string (the config store's name rule). */
const embeddedSecretRef = /\$\{secret:([A-Za-z0-9_][A-Za-z0-9_.\-/]{0,127})\}/g;

/** The built-in offline provider entry. */
const OFFLINE_ENTRY: ProviderEntry = providerEntrySchema.parse({
  type: 'offline',
  models: ['offline'],
  contextWindow: 8192,
  maxOutputTokens: 1024,
});

/** Creates the model resolver over the context's live `providers` section. */
export function createModelResolver(ctx: RuntimeContext): ModelResolver {
  const { settings } = ctx;
  const factory: ProviderFactory = settings.providerFactory ?? defaultProviderFactory;
  const providerCache = new Map<string, { fingerprint: string; provider: ModelProvider }>();

  function defaultProviderFactory(
    id: string,
    entry: ProviderEntry,
    apiKey: string | undefined,
  ): ModelProvider {
    const common = {
      id,
      baseUrl: entry.baseUrl,
      apiKey,
      headers: entry.headers,
      timeoutMs: entry.timeoutMs,
      maxRetries: entry.maxRetries,
      logger: ctx.logger,
    };
    switch (entry.type) {
      case 'offline':
        return createOfflineProvider({ ...settings.offline, id });
      case 'openai-compatible':
        return createOpenAiCompatibleProvider(common);
      case 'anthropic':
        return createAnthropicProvider(common);
    }
  }

  function providerEntry(providerId: string): ProviderEntry | undefined {
    return (
      ownEntry(ctx.config.providers.entries, providerId) ??
      (providerId === OFFLINE_PROVIDER_ID ? OFFLINE_ENTRY : undefined)
    );
  }

  function resolve(
    agent: AgentDefinition,
    override: string | undefined,
    operation?: OperationModel,
  ): ResolvedModel {
    let providerId = operation?.provider ?? agent.provider;
    let model = operation?.model ?? (operation?.provider ? undefined : agent.model);
    if (override) {
      const slash = override.indexOf('/');
      const prefix = slash > 0 ? override.slice(0, slash) : undefined;
      if (prefix && providerEntry(prefix)) {
        providerId = prefix;
        model = override.slice(slash + 1);
      } else {
        model = override;
      }
    }
    const entry = providerEntry(providerId);
    if (!entry) {
      throw new AgentRuntimeError('PROVIDER_NOT_FOUND', `Provider not found: ${providerId}`, {
        data: { provider: providerId },
      });
    }
    model ??= modelIds(entry)[0];
    if (!model) {
      throw new AgentRuntimeError(
        'PROVIDER_NOT_FOUND',
        `Provider ${providerId} lists no models; set the agent's model or providers.entries.${providerId}.models`,
        { data: { provider: providerId } },
      );
    }
    const detail = entry.models.find((candidate) => typeof candidate !== 'string' && candidate.id === model);
    const own = typeof detail === 'object' ? detail : undefined;
    return {
      providerId,
      entry,
      model,
      contextWindow: own?.contextWindow ?? entry.contextWindow,
      maxOutputTokens: own?.maxOutputTokens ?? entry.maxOutputTokens,
      prices: own?.prices ?? entry.prices,
      capabilities: {
        jsonSchema: own?.capabilities?.jsonSchema ?? entry.capabilities.jsonSchema,
        images: own?.capabilities?.images ?? entry.capabilities.images,
      },
    };
  }

  async function resolveApiKey(providerId: string, entry: ProviderEntry): Promise<string | undefined> {
    if (!entry.apiKey) return undefined;
    const match = /^\$\{secret:([A-Za-z0-9_][A-Za-z0-9_.\-/]{0,127})\}$/.exec(entry.apiKey);
    if (!match) return entry.apiKey;
    const name = match[1] ?? '';
    const value = await settings.resolveSecret(name);
    if (value === undefined || value === '') {
      throw new AgentRuntimeError(
        'SECRET_MISSING',
        `Provider ${providerId}: secret ${name} is not set (referenced at providers.entries.${providerId}.apiKey)`,
        { data: { provider: providerId, name } },
      );
    }
    return value;
  }

  /**
   * The entry's headers with every `${secret:NAME}` in a value resolved (a custom auth header
   * is a credential as much as the API key is).
   */
  async function resolveHeaders(providerId: string, entry: ProviderEntry): Promise<ProviderEntry> {
    if (!entry.headers) return entry;
    const headers: Record<string, string> = {};
    for (const [header, value] of Object.entries(entry.headers)) {
      let resolvedValue = value;
      for (const match of value.matchAll(embeddedSecretRef)) {
        const name = match[1] ?? '';
        const secret = await settings.resolveSecret(name);
        if (secret === undefined || secret === '') {
          throw new AgentRuntimeError(
            'SECRET_MISSING',
            `Provider ${providerId}: secret ${name} is not set (referenced at providers.entries.${providerId}.headers.${header})`,
            { data: { provider: providerId, name } },
          );
        }
        // A function replacement: `$` in a secret is not a replacement pattern.
        resolvedValue = resolvedValue.replace(match[0], () => secret);
      }
      headers[header] = resolvedValue;
    }
    return { ...entry, headers };
  }

  async function build({ providerId, entry }: ResolvedModel): Promise<ModelProvider> {
    return factory(
      providerId,
      await resolveHeaders(providerId, entry),
      await resolveApiKey(providerId, entry),
    );
  }

  async function provider(resolved: ResolvedModel): Promise<ModelProvider> {
    const { providerId, entry } = resolved;
    const fingerprint = JSON.stringify(entry);
    const cached = providerCache.get(providerId);
    if (cached && cached.fingerprint === fingerprint) return cached.provider;
    const built = await build(resolved);
    providerCache.set(providerId, { fingerprint, provider: built });
    return built;
  }

  async function freshProvider(resolved: ResolvedModel): Promise<ModelProvider> {
    return build(resolved);
  }

  function forgetProviders(): void {
    providerCache.clear();
  }

  function list(): { providers: ProviderView[]; models: ModelView[] } {
    const entries = new Map(Object.entries(ctx.config.providers.entries));
    if (!entries.has(OFFLINE_PROVIDER_ID)) entries.set(OFFLINE_PROVIDER_ID, OFFLINE_ENTRY);
    const providers: ProviderView[] = [];
    const all: ModelView[] = [];
    for (const [id, entry] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const capabilityClass = entry.capabilities.capabilityClass;
      const models = entry.models.map((model) => {
        const detail = typeof model === 'string' ? { id: model } : model;
        return {
          id: `${id}/${detail.id}`,
          provider: id,
          model: detail.id,
          ...(capabilityClass ? { capabilityClass } : {}),
          contextWindow: detail.contextWindow ?? entry.contextWindow,
          maxOutputTokens: detail.maxOutputTokens ?? entry.maxOutputTokens,
          prices: detail.prices ?? entry.prices,
        };
      });
      all.push(...models);
      providers.push({
        id,
        type: entry.type,
        offline: entry.type === 'offline',
        ...(entry.baseUrl ? { baseUrl: safeUrl(entry.baseUrl) } : {}),
        apiKeyConfigured: entry.apiKey !== undefined,
        ...(capabilityClass ? { capabilityClass } : {}),
        contextWindow: entry.contextWindow,
        maxOutputTokens: entry.maxOutputTokens,
        models,
      });
    }
    return { providers, models: all };
  }

  return { providerEntry, resolve, provider, freshProvider, list, forgetProviders };
}

function modelIds(entry: ProviderEntry): string[] {
  return entry.models.map((model) => (typeof model === 'string' ? model : model.id));
}

function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '';
  }
}
