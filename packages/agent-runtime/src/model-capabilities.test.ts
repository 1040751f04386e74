import type { AgentTool } from '@agentd/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordingScript, startRuntime } from '../test/helpers.js';
import type { ModelCapabilities } from './config.js';
import { isAgentRuntimeError } from './errors.js';
import { createOfflineProvider } from './offline-provider.js';
import type { ModelRequest } from './provider.js';

/** A 1x1 PNG, as an MCP server's image content carries it (base64). */
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const screenshot: AgentTool<Record<string, never>> = {
  name: 'screenshot',
  description: 'Takes a screenshot',
  params: z.object({}),
  handler: async (_params, context) => {
    context.attachImages?.([{ data: PIXEL, mediaType: 'image/png' }]);
    return { taken: true };
  },
};

/**
 * A runtime whose provider `vision` speaks a wire that carries images and JSON schemas (the
 * offline provider with every capability), configured with `capabilities` pins.
 */
async function runtimeWith(
  capabilities: ModelCapabilities,
  models: Array<string | { id: string; capabilities: ModelCapabilities }> = ['m1'],
) {
  const seen: ModelRequest[] = [];
  const t = await startRuntime({
    providerFactory: (id) => ({
      ...createOfflineProvider({
        id,
        script: recordingScript(seen, (request) =>
          request.messages.at(-1)?.role === 'tool'
            ? { text: 'seen' }
            : request.tools.some((tool) => tool.name === 'screenshot')
              ? { toolCalls: [{ toolName: 'screenshot', input: {}, toolCallId: 'shot-1' }] }
              : { text: '{"ok":true}' },
        ),
      }),
      capabilities: { images: true, json: true, jsonObject: true, forcedToolChoice: true },
    }),
    tools: [screenshot as AgentTool],
    providers: {
      entries: {
        vision: { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', models, capabilities },
      },
    },
    agents: {
      entries: {
        shooter: { name: 'Shooter', provider: 'vision', tools: ['screenshot'] },
        plain: { name: 'Plain', provider: 'vision', tools: [] },
      },
    },
  });
  return { t, seen };
}

const schemaFormat = {
  type: 'json' as const,
  name: 'answer',
  schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
};

describe('configured model capabilities', () => {
  it('refuses a JSON schema answer from a model pinned without it, naming the field; JSON mode still works', async () => {
    const { t, seen } = await runtimeWith({ jsonSchema: false });
    await expect(
      t.runtime.runTurn({
        agentId: 'plain',
        message: 'x',
        sessionKey: 'default:openai:j1',
        callOptions: { responseFormat: schemaFormat },
      }),
    ).rejects.toSatisfy(
      (error) =>
        isAgentRuntimeError(error, 'INVALID_OPTIONS') &&
        error.message.includes('callOptions.responseFormat') &&
        error.message.includes('providers.entries.vision capabilities.jsonSchema is false'),
    );
    expect(seen).toHaveLength(0);
    const plain = await t.runtime.runTurn({
      agentId: 'plain',
      message: 'x',
      sessionKey: 'default:openai:j1',
      callOptions: { responseFormat: { type: 'json' } },
    });
    expect(plain.response).toBe('{"ok":true}');
  });

  it('lets a model pin over its provider: the one model that takes schemas is held to one', async () => {
    const { t, seen } = await runtimeWith({ jsonSchema: false }, [
      'm1',
      { id: 'm2', capabilities: { jsonSchema: true } },
    ]);
    await t.runtime.runTurn({
      agentId: 'plain',
      model: 'm2',
      message: 'x',
      sessionKey: 'default:openai:j2',
      callOptions: { responseFormat: schemaFormat },
    });
    expect(seen[0]?.options?.responseFormat).toEqual(schemaFormat);
  });

  it('refuses images in the turn for a model pinned without image input', async () => {
    const { t } = await runtimeWith({ images: false });
    await expect(
      t.runtime.runTurn({
        agentId: 'plain',
        message: 'what is this?',
        sessionKey: 'default:openai:i1',
        images: [{ url: 'https://example.test/cat.png' }],
      }),
    ).rejects.toSatisfy(
      (error) =>
        isAgentRuntimeError(error, 'INVALID_OPTIONS') &&
        error.message.includes('images') &&
        error.message.includes('capabilities.images is false'),
    );
  });

  it('replaces a tool’s images by a note of what they were for a model without image input', async () => {
    const { t, seen } = await runtimeWith({ images: false });
    const result = await t.runtime.runTurn({
      agentId: 'shooter',
      message: 'take a screenshot',
      sessionKey: 'default:main:i2',
    });
    expect(result.response).toBe('seen');
    const toolMessage = seen[1]?.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', toolName: 'screenshot' });
    expect(toolMessage).not.toHaveProperty('images');
    expect(toolMessage?.content).toBe(
      '{"taken":true}\n[The tool returned 1 image (image/png, 70 bytes). They were not sent: this model cannot see images.]',
    );
    // The session keeps the same note for later turns.
    const { messages } = await t.runtime.sessions.history('default:main:i2');
    expect(messages.find((message) => message.role === 'tool')?.content).toContain('cannot see images');
  });

  it('sends a tool’s images to a model that takes them', async () => {
    const { t, seen } = await runtimeWith({});
    await t.runtime.runTurn({
      agentId: 'shooter',
      message: 'take a screenshot',
      sessionKey: 'default:main:i3',
    });
    expect(seen[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: '{"taken":true}',
      images: [{ data: PIXEL, mediaType: 'image/png' }],
    });
  });
});
