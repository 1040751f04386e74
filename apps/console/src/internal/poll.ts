import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** What a {@link PollController} runs and when. */
export interface PollOptions {
  /** Milliseconds between polls. */
  everyMs: number;
  /** Loads the page's data; it shows its own errors. */
  refresh: () => Promise<void>;
  /** Whether the next tick refreshes (something on the page is still changing). @default always */
  active?: () => boolean;
  /**
   * The page's route params: when the router hands new ones to an attached page (navigation
   * from one record to another), it refreshes at once. @default no route
   */
  route?: () => unknown;
}

/**
 * Keeps a live page fresh: it refreshes once when the page is attached, then every `everyMs`
 * while `active()` holds and whenever its route changes, and stops ticking when the page is
 * detached (navigation away).
 */
export class PollController implements ReactiveController {
  private timer: ReturnType<typeof setInterval> | undefined;
  private route: unknown;

  constructor(
    host: ReactiveControllerHost,
    private readonly options: PollOptions,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    const { everyMs, refresh, active, route } = this.options;
    // Params the router set before attaching are the ones the first refresh loads.
    this.route = route?.();
    this.timer = setInterval(() => {
      if (active === undefined || active()) void refresh();
    }, everyMs);
    void refresh();
  }

  hostUpdated(): void {
    const { refresh, route } = this.options;
    if (route === undefined) return;
    const current = route();
    if (current === this.route) return;
    const navigated = this.route !== undefined;
    this.route = current;
    if (navigated) void refresh();
  }

  hostDisconnected(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
