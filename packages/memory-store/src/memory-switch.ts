import type { MemorySection } from './options.js';
import type { createMemoryService, MemoryService } from './service.js';

/**
 * `memory.enabled` applied in place: the memory service is opened the first time memory is
 * on (at start, or when a config change turns it on) and handed to whoever listens; turning
 * memory off withdraws it from them. A service once opened stays open, idle, while memory is
 * off (a call already running keeps working), is given the section again when memory comes
 * back, and is closed with the daemon.
 */
export interface MemorySwitch {
  /** The memory service while `memory.enabled` is true, else undefined. */
  readonly current: MemoryService | undefined;
  /** Applies a `memory` section: opens or re-configures the service when enabled, withdraws it when not. */
  apply(section: MemorySection): Promise<void>;
  /** Calls `listener` now with the current service and again on every switch on or off. */
  onSwitch(listener: (service: MemoryService | undefined) => void): void;
  /** Closes the service if it was ever opened. */
  close(): Promise<void>;
}

/**
 * Creates the switch; `open` builds the service from a section (for example with
 * {@link createMemoryService}; resolving secret references is its job). Nothing is opened
 * until the first {@link MemorySwitch.apply} of an enabled section.
 */
export function createMemorySwitch(options: {
  open: (section: MemorySection) => Promise<MemoryService>;
}): MemorySwitch {
  let opened: MemoryService | undefined;
  let opening: Promise<MemoryService> | undefined;
  let enabled = false;
  const listeners: Array<(service: MemoryService | undefined) => void> = [];
  const publish = () => {
    for (const listener of listeners) listener(enabled ? opened : undefined);
  };
  return {
    get current() {
      return enabled ? opened : undefined;
    },
    async apply(section) {
      if (!section.enabled) {
        if (!enabled) return;
        enabled = false;
        publish();
        return;
      }
      if (opened === undefined) {
        opening ??= options.open(section).finally(() => {
          opening = undefined;
        });
        opened = await opening;
      } else {
        await opened.applyConfig(section);
      }
      if (!enabled) {
        enabled = true;
        publish();
      }
    },
    onSwitch(listener) {
      listeners.push(listener);
      listener(enabled ? opened : undefined);
    },
    async close() {
      enabled = false;
      await opening?.catch(() => undefined);
      await opened?.close();
      opened = undefined;
    },
  };
}
