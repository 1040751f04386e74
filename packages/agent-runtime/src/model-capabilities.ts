import type { ToolImage } from '@agentd/contracts';
import type { ResolvedModel } from './model-resolver.js';
import type { ModelProvider, ProviderCapabilities } from './provider.js';
import type { NewMessage } from './session-store.js';

/** What a provider without declared capabilities is taken to honour: everything. */
const ALL: ProviderCapabilities = { images: true, json: true, jsonObject: true, forcedToolChoice: true };

/** What one turn's model honours, and why not where it does not. */
export interface TurnCapabilities extends ProviderCapabilities {
  /** Why images are not taken (`images` false). */
  imagesRefusal: string;
  /** Why a JSON schema cannot be held to (`json` false). */
  jsonRefusal: string;
}

/**
 * What the model of a turn honours: what its provider's wire protocol carries, narrowed by the
 * operator's `capabilities` pins of the provider and the model (a pin can only take away).
 */
export function modelCapabilities(provider: ModelProvider, resolved: ResolvedModel): TurnCapabilities {
  const wire = provider.capabilities ?? ALL;
  const pinned = resolved.capabilities;
  const where = `providers.entries.${resolved.providerId}`;
  const model = `model ${resolved.model} of provider ${provider.id}`;
  return {
    ...wire,
    images: wire.images && pinned.images !== false,
    json: wire.json && pinned.jsonSchema !== false,
    imagesRefusal: wire.images
      ? `${model} does not take images (${where} capabilities.images is false)`
      : `provider ${provider.id} does not take images`,
    jsonRefusal: wire.json
      ? `${model} cannot be held to a JSON schema (${where} capabilities.jsonSchema is false)`
      : `provider ${provider.id} cannot be held to a JSON schema`,
  };
}

/**
 * A tool result whose images the model cannot see: the images stay out of the request and the
 * result says what they were, so the model neither guesses at them nor asks again.
 */
export function withImageNote(
  message: NewMessage,
  images: readonly ToolImage[],
  count: (text: string) => number,
): NewMessage {
  const kinds = [...new Set(images.map((image) => image.mediaType))].join(', ');
  const bytes = images.reduce((sum, image) => sum + base64Bytes(image.data), 0);
  const note =
    `[The tool returned ${images.length} image${images.length === 1 ? '' : 's'} (${kinds}, ` +
    `${formatBytes(bytes)}). They were not sent: this model cannot see images.]`;
  const content = message.content === '' ? note : `${message.content}\n${note}`;
  return { ...message, content, tokens: message.tokens + count(`\n${note}`) };
}

/** The bytes base64 text decodes to: three per four characters, less the `=` padding. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
