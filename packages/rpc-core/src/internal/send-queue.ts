import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { RpcLogger } from '../logger.js';

/** Close code for a connection whose peer stopped reading its answers (documented in the README). */
export const SLOW_CONSUMER_CLOSE_CODE = 4009;
const SLOW_CONSUMER_REASON = 'Send queue full';
/** After the close frame, how long a peer that reads nothing gets before the socket is destroyed. */
const TERMINATE_AFTER_MS = 1000;
/** Characters of messages held while paused past which the peer is closed at once (one TCP read is far less). */
const MAX_HELD_CHARS = 4 * 1024 * 1024;

/** Settings of the per-connection send queue. */
export interface SendQueueSettings {
  /** Bytes queued for one connection past which its input is paused; `0` turns the cap off. */
  maxBufferedBytes: number;
  /** How long a connection may stay over the cap before it is closed with 4009. */
  slowClientTimeoutMs: number;
  logger: RpcLogger;
}

/**
 * Backpressure for one connection. When the bytes queued for sending pass the cap, the
 * connection stops being read (its TCP stream is paused, and messages already received are
 * held, not answered, until the queue drains), so a peer that does not read cannot make the
 * server buffer without bound; a peer that stays over the cap for `slowClientTimeoutMs` is
 * closed with 4009 and logged.
 */
export class SendQueue {
  #stalled = false;
  #timer: NodeJS.Timeout | undefined;
  #held: Array<{ text: string; isBinary: boolean }> = [];
  #heldChars = 0;
  #closing = false;
  readonly #onDrain = (): void => this.#drained();

  constructor(
    private readonly socket: WebSocket,
    private readonly stream: Duplex,
    private readonly connectionId: string,
    private readonly settings: SendQueueSettings,
    /** Handles a held message once the queue has drained. */
    private readonly process: (text: string, isBinary: boolean) => void,
  ) {}

  /** Whether input is paused; a message received meanwhile is passed to {@link hold}. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /**
   * Keeps a message that arrived in the read that stalled the connection, for after the drain.
   * Reading is paused, so only what was already read arrives here; a peer that still pushes
   * more than {@link MAX_HELD_CHARS} is closed at once.
   */
  hold(text: string, isBinary: boolean): void {
    this.#held.push({ text, isBinary });
    this.#heldChars += text.length;
    if (this.#heldChars > MAX_HELD_CHARS) this.#closeSlow();
  }

  /** Called after each send: pauses the connection once its queue is over the cap. */
  check(): void {
    const { maxBufferedBytes, slowClientTimeoutMs, logger } = this.settings;
    if (maxBufferedBytes === 0 || this.#stalled || this.socket.bufferedAmount <= maxBufferedBytes) return;
    this.#stalled = true;
    // ws's own pause: ws resumes a socket it paused itself unless the WebSocket is paused.
    this.socket.pause();
    this.stream.on('drain', this.#onDrain);
    this.#timer = setTimeout(() => this.#closeSlow(), slowClientTimeoutMs);
    this.#timer.unref();
    logger.debug(
      { connectionId: this.connectionId, bufferedBytes: this.socket.bufferedAmount },
      'websocket send queue full; reading paused',
    );
  }

  /** Stops the timer and listener (the connection closed). */
  release(): void {
    clearTimeout(this.#timer);
    this.stream.off('drain', this.#onDrain);
    this.#held = [];
    this.#heldChars = 0;
  }

  #drained(): void {
    if (this.socket.bufferedAmount > this.settings.maxBufferedBytes) return;
    clearTimeout(this.#timer);
    this.stream.off('drain', this.#onDrain);
    this.#stalled = false;
    // Held messages go first, in order; one of them may stall the connection again.
    while (this.#held.length > 0 && !this.#stalled) {
      const held = this.#held.shift()!;
      this.#heldChars -= held.text.length;
      this.process(held.text, held.isBinary);
    }
    if (!this.#stalled) this.socket.resume();
  }

  #closeSlow(): void {
    if (this.#closing) return;
    this.#closing = true;
    this.settings.logger.warn(
      {
        connectionId: this.connectionId,
        bufferedBytes: this.socket.bufferedAmount,
        closeCode: SLOW_CONSUMER_CLOSE_CODE,
        errorKind: 'resource',
        hint: 'The client stopped reading its answers for slowClientTimeoutMs; its connection was closed so its queue is freed.',
      },
      'websocket closed: client not reading',
    );
    this.release();
    this.socket.close(SLOW_CONSUMER_CLOSE_CODE, SLOW_CONSUMER_REASON);
    // A peer that reads nothing will not read the close frame either.
    setTimeout(() => this.socket.terminate(), TERMINATE_AFTER_MS).unref();
  }
}
