import type { BrowserService } from '@agentd/browser';
import { createBrowserService } from '@agentd/browser';
import { type ConfigStore, parseSecretRef, resolveSecretRefs } from '@agentd/config-store';
import type { EventSink } from '@agentd/contracts';
import {
  createMediaService,
  type HttpProvider,
  type MediaService,
  type MediaServiceOptions,
  readConfinedFile,
} from '@agentd/media';
import { createTerminalService, type TerminalService } from '@agentd/terminal';
import {
  createWorkspaceService,
  type WorkspaceService,
  workspaceGitEnv,
  workspacePath,
} from '@agentd/workspace';
import type { DaemonConfig } from './config-schema.js';
import type { Lifecycle } from './lifecycle.js';
import type { ServiceContext } from './services.js';

/** The services whose agent tools act on the machine: the browser, media, workspaces, drives. */
export interface ToolServices {
  browser: BrowserService;
  media: MediaService;
  /** The provider media follows with `stt.followMainKey`, kept resolved (see followedMediaProvider). */
  mediaMainProvider: { refresh(): Promise<void> };
  workspace: WorkspaceService;
  terminal: TerminalService;
}

/**
 * Starts the browser, media, workspace and terminal services (each stopped by the lifecycle);
 * their tools are registered with the runtime by the caller.
 */
export async function startToolServices(
  context: ServiceContext,
  lifecycle: Lifecycle,
  stores: {
    events: EventSink;
    lookupSecret: (name: string) => Promise<string | undefined>;
    /** Sends a generated image to the chat that asked for it (the channels' delivery queue). */
    deliverImage?: MediaServiceOptions['deliverImage'];
  },
): Promise<ToolServices> {
  const { config, configStore, dataDir, now, logger } = context;
  const { events, lookupSecret } = stores;
  // Nothing is launched until a browser.* call needs it; the profile lives in the data dir.
  const browser = await lifecycle.start(
    'browser',
    () => createBrowserService({ ...config.browser, dataDir, now, logger: logger.module('browser') }),
    (service) => service.shutdown(),
  );

  // Speech, vision, documents, video and links; engines are spawned per call. Synthesized speech
  // goes under the agent's workspace directory (the workspace package's one path function).
  const mediaMainProvider = followedMediaProvider(configStore, lookupSecret);
  await mediaMainProvider.refresh();
  const media = await lifecycle.start(
    'media',
    async () =>
      createMediaService({
        section: await resolveSecretRefs(config.media, lookupSecret),
        agentDir: (agentId) => workspacePath(dataDir, agentId),
        readWorkspaceFile: readConfinedFile((agentId) => workspacePath(dataDir, agentId)),
        // Kept resolved: refreshed when the providers section (or a secret it names) changes.
        mainProvider: mediaMainProvider.current,
        deliverImage: stores.deliverImage,
        events,
        logger: logger.module('media'),
        now,
      }),
    (service) => service.close(),
  );

  // Nothing is created until a call needs it: workspaces appear at workspace.init or first use.
  const workspace = createWorkspaceService({
    ...config.workspace,
    dataDir,
    now,
    logger: logger.module('workspace'),
  });
  // Drives run in the agent's workspace; stopping the daemon kills every drive's process group.
  const terminal = await lifecycle.start(
    'terminal',
    () =>
      createTerminalService({
        ...config.terminal,
        cwd: (agentId) => workspace.ensure(agentId),
        // git in a drive works on the workspace's repository and names the agent in commits.
        agentEnv: (agentId) => workspaceGitEnv(dataDir, agentId),
        events,
        now,
        logger: logger.module('terminal'),
      }),
    (service) => service.shutdown(),
  );

  return { browser, media, mediaMainProvider, workspace, terminal };
}

/**
 * The provider `media.stt.followMainKey` uses: the first OpenAI-compatible entry with a base
 * URL, its key resolved from a `${secret:NAME}` reference (undefined when it cannot be). Media
 * asks for it synchronously and a secret lookup is not, so it is kept resolved and refreshed.
 */
function followedMediaProvider(
  configStore: ConfigStore<DaemonConfig>,
  lookupSecret: (name: string) => Promise<string | undefined>,
): { current: () => HttpProvider | undefined; refresh: () => Promise<void> } {
  let current: HttpProvider | undefined;
  const resolve = async (): Promise<HttpProvider | undefined> => {
    for (const [id, entry] of Object.entries(configStore.current().providers.entries)) {
      if (entry.type !== 'openai-compatible' || !entry.baseUrl) continue;
      const reference = parseSecretRef(entry.apiKey);
      const apiKey = reference === undefined ? entry.apiKey : await lookupSecret(reference);
      if (entry.apiKey !== undefined && apiKey === undefined) return undefined;
      return { id, baseUrl: entry.baseUrl, ...(apiKey ? { apiKey } : {}) };
    }
    return undefined;
  };
  return {
    current: () => current,
    refresh: async () => {
      current = await resolve();
    },
  };
}
