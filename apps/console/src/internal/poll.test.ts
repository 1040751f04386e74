import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PollController } from './poll.js';

/** The part of a Lit element a controller sees: it registers and is told of attach and detach. */
function host() {
  const controllers: ReactiveController[] = [];
  const element: ReactiveControllerHost = {
    addController: (controller) => void controllers.push(controller),
    removeController: () => undefined,
    requestUpdate: () => undefined,
    updateComplete: Promise.resolve(true),
  };
  return {
    element,
    connect: () => {
      for (const controller of controllers) controller.hostConnected?.();
    },
    updated: () => {
      for (const controller of controllers) controller.hostUpdated?.();
    },
    disconnect: () => {
      for (const controller of controllers) controller.hostDisconnected?.();
    },
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('PollController', () => {
  it('refreshes on attach, then every period while active, and stops when detached', () => {
    const page = host();
    let active = true;
    const refresh = vi.fn(() => Promise.resolve());
    new PollController(page.element, { everyMs: 1000, refresh, active: () => active });
    expect(refresh).not.toHaveBeenCalled();
    page.connect();
    expect(refresh).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(2000);
    expect(refresh).toHaveBeenCalledTimes(3);
    active = false;
    vi.advanceTimersByTime(3000);
    expect(refresh).toHaveBeenCalledTimes(3);
    active = true;
    page.disconnect();
    vi.advanceTimersByTime(5000);
    expect(refresh).toHaveBeenCalledTimes(3);
  });

  it('polls on every tick when no active test is given', () => {
    const page = host();
    const refresh = vi.fn(() => Promise.resolve());
    new PollController(page.element, { everyMs: 5000, refresh });
    page.connect();
    vi.advanceTimersByTime(15_000);
    expect(refresh).toHaveBeenCalledTimes(4);
  });

  it('refreshes when the route changes on an attached page, not for the params it was attached with', () => {
    const page = host();
    let params: string[] | undefined = ['run-1'];
    const refresh = vi.fn(() => Promise.resolve());
    new PollController(page.element, { everyMs: 60_000, refresh, route: () => params });
    page.connect();
    page.updated();
    expect(refresh).toHaveBeenCalledTimes(1);
    params = ['run-2'];
    page.updated();
    expect(refresh).toHaveBeenCalledTimes(2);
    page.updated();
    expect(refresh).toHaveBeenCalledTimes(2);
  });

  it('does not refresh when the first params arrive after attaching', () => {
    const page = host();
    let params: string[] | undefined;
    const refresh = vi.fn(() => Promise.resolve());
    new PollController(page.element, { everyMs: 60_000, refresh, route: () => params });
    page.connect();
    params = ['run-1'];
    page.updated();
    expect(refresh).toHaveBeenCalledTimes(1);
  });
});
