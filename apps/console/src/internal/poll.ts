import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** What a {@link PollController} runs and when. */
export interface PollOptions {
  /** Milliseconds between polls. */
  everyMs: number;
  /** Loads the page's data; it shows its own errors. */
  refresh: () => Promise<void>;
  /** Whether the next tick refreshes (something on the page is still changing). @default always */
  active?: () => boolean;
}

/**
 * Keeps a live page fresh: it refreshes once when the page is attached, then every `everyMs`
 * while `active()` holds, and stops ticking when the page is detached (navigation away).
 */
export class PollController implements ReactiveController {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    host: ReactiveControllerHost,
    private readonly options: PollOptions,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    const { everyMs, refresh, active } = this.options;
    this.timer = setInterval(() => {
      if (active === undefined || active()) void refresh();
    }, everyMs);
    void refresh();
  }

  hostDisconnected(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
