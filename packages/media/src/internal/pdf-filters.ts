import { Readable } from 'node:stream';
import { createInflate, inflateSync } from 'node:zlib';

/**
 * The PDF stream filters pdf.js applies, decoded under one byte budget per document. Flate is
 * node:zlib; ASCIIHex, ASCII85, RunLength and LZW are decoded here byte for byte as pdf.js
 * decodes them (same end markers, same padding), so what is counted is what pdf.js would make.
 */
export type FilterName = 'flate' | 'lzw' | 'rl' | 'ahx' | 'a85';

/** One filter of a chain; `earlyChange` is LZW's (0 or 1). */
export interface Stage {
  filter: FilterName;
  earlyChange?: number;
}

/** The document's budget: bytes made by every stage, and input bytes fed to first stages. */
export class DecodeBudget {
  used = 0;
  fed = 0;
  constructor(
    readonly maxOutput: number,
    readonly maxFed: number,
  ) {}
  add(bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxOutput) throw new BudgetExceeded('output');
  }
  feed(bytes: number): void {
    this.fed += bytes;
    if (this.fed > this.maxFed) throw new BudgetExceeded('input');
  }
}

/** Thrown when a budget is spent: the document is refused. */
export class BudgetExceeded extends Error {
  constructor(readonly which: 'output' | 'input') {
    super(`the PDF's streams pass the ${which} budget`);
  }
}

/**
 * How a chain decoded: `clean` when every stage decoded to its own end (what pdf.js makes is
 * then exactly what was counted, or a prefix of it), `unclean` when a stage failed or read
 * something pdf.js reads otherwise: such a stream is not handed to pdf.js decoded.
 */
export type ChainOutcome = 'clean' | 'unclean';

/** A pdf.js-equivalent decoder fed in pieces; `done` once its end marker was read. */
interface Decoder {
  done: boolean;
  invalid: boolean;
  push(input: Uint8Array, emit: (out: Buffer) => void): void;
  finish(emit: (out: Buffer) => void): void;
}

/** Largest output a stage may make in the fast path before the chain is streamed instead. */
const SYNC_MAX = 4 * 1024 * 1024;
const SLOW = Symbol('slow');

/**
 * Decodes a chain in memory when every stage's output stays under 4 MiB and the first stage
 * ends inside `[start, firstEnd)`: the common case, kept cheap. `slow` when it must be streamed.
 */
export function decodeChainSync(
  file: Buffer,
  start: number,
  firstEnd: number,
  stages: readonly Stage[],
  budget: DecodeBudget,
  onOutput: (chunk: Buffer) => void,
): ChainOutcome | 'slow' {
  let input: Buffer = file.subarray(start, firstEnd);
  // Counted whole: a file whose streams never end must not be read to its end once per stream.
  budget.feed(input.length);
  let made = 0;
  for (const [index, stage] of stages.entries()) {
    if (stage.filter === 'flate') {
      try {
        input = inflateSync(input, { maxOutputLength: SYNC_MAX });
      } catch (error) {
        // The first stage's data may run past the first `endstream` (its /Length says so).
        if (index === 0 || (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return 'slow';
        return 'unclean';
      }
    } else {
      const decoder = decoderFor(stage);
      const pieces: Buffer[] = [];
      let size = 0;
      const emit = (out: Buffer) => {
        size += out.length;
        if (size > SYNC_MAX) throw SLOW;
        pieces.push(out);
      };
      try {
        decoder.push(input, emit);
        if (!decoder.done) {
          if (index === 0) return 'slow';
          decoder.finish(emit);
        }
      } catch (error) {
        if (error === SLOW) return 'slow';
        throw error;
      }
      if (decoder.invalid) return 'unclean';
      input = Buffer.concat(pieces);
    }
    made += input.length;
  }
  budget.add(made);
  onOutput(input);
  return 'clean';
}

/**
 * Streams a chain from `start` to the end of the file (the first stage stops at its own end
 * marker), every stage's output counted against the budget as it comes: memory stays at a few
 * chunks whatever the chain inflates to. Throws {@link BudgetExceeded}.
 */
export async function decodeChainStreaming(
  file: Buffer,
  start: number,
  firstEnd: number,
  stages: readonly Stage[],
  budget: DecodeBudget,
  onOutput: (chunk: Buffer) => void,
): Promise<ChainOutcome> {
  const cleanups: Array<() => void> = [];
  const decoders: Decoder[] = [];
  let stream: AsyncIterable<Buffer> = source(file, start, firstEnd, budget);
  for (const stage of stages) {
    if (stage.filter === 'flate') stream = flateStage(stream, budget, cleanups);
    else {
      const decoder = decoderFor(stage);
      decoders.push(decoder);
      stream = jsStage(decoder, stream, budget);
    }
  }
  try {
    for await (const chunk of stream) onOutput(chunk);
    return decoders.some((decoder) => decoder.invalid) ? 'unclean' : 'clean';
  } catch (error) {
    if (error instanceof BudgetExceeded) throw error;
    return 'unclean';
  } finally {
    for (const cleanup of cleanups) cleanup();
  }
}

async function* source(file: Buffer, start: number, firstEnd: number, budget: DecodeBudget) {
  let at = start;
  let end = Math.min(file.length, firstEnd + 16);
  while (at < file.length) {
    budget.feed(end - at);
    yield file.subarray(at, end);
    at = end;
    end = Math.min(file.length, at + 64 * 1024);
  }
}

function flateStage(
  input: AsyncIterable<Buffer>,
  budget: DecodeBudget,
  cleanups: Array<() => void>,
): AsyncIterable<Buffer> {
  const from = Readable.from(input, { objectMode: false });
  // Large chunks: fewer round trips to zlib's thread, still a bounded amount in memory.
  const inflate = createInflate({ chunkSize: 256 * 1024 });
  cleanups.push(() => {
    from.destroy();
    inflate.destroy();
  });
  // Past the end of the deflate data nothing more is read from upstream.
  inflate.on('end', () => from.destroy());
  from.on('error', (error) => inflate.destroy(error));
  from.pipe(inflate);
  return (async function* () {
    for await (const chunk of inflate as AsyncIterable<Buffer>) {
      budget.add(chunk.length);
      yield chunk;
    }
  })();
}

async function* jsStage(decoder: Decoder, input: AsyncIterable<Buffer>, budget: DecodeBudget) {
  const pieces: Buffer[] = [];
  const emit = (out: Buffer) => {
    budget.add(out.length);
    pieces.push(out);
  };
  for await (const chunk of input) {
    // 1 KiB at a time: one piece of LZW makes at most a few MB.
    for (let at = 0; at < chunk.length && !decoder.done; at += 1024) {
      decoder.push(chunk.subarray(at, at + 1024), emit);
      yield* pieces.splice(0);
    }
    if (decoder.done) return;
  }
  decoder.finish(emit);
  yield* pieces.splice(0);
}

function decoderFor(stage: Stage): Decoder {
  switch (stage.filter) {
    case 'ahx':
      return new HexDecoder();
    case 'a85':
      return new Base85Decoder();
    case 'rl':
      return new RunLengthDecoder();
    case 'lzw':
      return new LzwDecoder(stage.earlyChange ?? 1);
    case 'flate':
      throw new Error('flate is decoded by zlib');
  }
}

/** Output gathered into 64 KiB pieces. */
class Sink {
  private buffer = Buffer.allocUnsafe(65_536);
  private length = 0;
  constructor(private readonly emit: (out: Buffer) => void) {}
  byte(value: number): void {
    this.buffer[this.length++] = value;
    if (this.length === this.buffer.length) this.flush();
  }
  flush(): void {
    if (this.length === 0) return;
    this.emit(Buffer.from(this.buffer.subarray(0, this.length)));
    this.length = 0;
  }
}

const isPdfWhite = (code: number) =>
  code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c || code === 0x00;

/** A decoder whose last, partial unit is completed at its end marker or at the end of its input. */
abstract class UnitDecoder implements Decoder {
  done = false;
  invalid = false;
  push(input: Uint8Array, emit: (out: Buffer) => void): void {
    const sink = new Sink(emit);
    this.decode(input, sink);
    if (this.done) this.completeUnit(sink);
    sink.flush();
  }
  finish(emit: (out: Buffer) => void): void {
    const sink = new Sink(emit);
    this.completeUnit(sink);
    sink.flush();
  }
  /** Decodes `input`, setting `done` at the end marker (and stopping there). */
  protected abstract decode(input: Uint8Array, sink: Sink): void;
  protected abstract completeUnit(sink: Sink): void;
}

/** ASCIIHexDecode: hex digits paired, `>` ends, anything else skipped, an odd digit padded with 0. */
class HexDecoder extends UnitDecoder {
  private first = -1;
  protected decode(input: Uint8Array, sink: Sink): void {
    for (const code of input) {
      let digit: number;
      if (code >= 0x30 && code <= 0x39) digit = code & 15;
      else if ((code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66)) digit = (code & 15) + 9;
      else if (code === 0x3e) {
        this.done = true;
        return;
      } else continue;
      if (this.first < 0) this.first = digit;
      else {
        sink.byte((this.first << 4) | digit);
        this.first = -1;
      }
    }
  }
  protected completeUnit(sink: Sink): void {
    if (this.first >= 0) sink.byte(this.first << 4);
    this.first = -1;
  }
}

/** ASCII85Decode: groups of five, `z` for four zeros, `~` ends, a short last group padded with `u`. */
class Base85Decoder extends UnitDecoder {
  private group: number[] = [];
  protected decode(input: Uint8Array, sink: Sink): void {
    for (const code of input) {
      if (isPdfWhite(code)) continue;
      if (code === 0x7e) {
        this.done = true;
        return;
      }
      if (code === 0x7a && this.group.length === 0) {
        for (let index = 0; index < 4; index += 1) sink.byte(0);
        continue;
      }
      this.group.push(code);
      if (this.group.length === 5) this.completeUnit(sink);
    }
  }
  protected completeUnit(sink: Sink): void {
    const count = this.group.length;
    if (count === 0) return;
    while (this.group.length < 5) this.group.push(0x75);
    let value = 0;
    for (const code of this.group) value = value * 85 + (code - 33);
    const bytes = [0, 0, 0, 0];
    for (let index = 3; index >= 0; index -= 1) {
      bytes[index] = value & 255;
      value >>= 8;
    }
    for (const byte of bytes.slice(0, count - 1)) sink.byte(byte);
    this.group = [];
  }
}

/** RunLengthDecode: n < 128 copies n+1 bytes, n > 128 repeats the next byte 257-n times, 128 ends. */
class RunLengthDecoder implements Decoder {
  done = false;
  invalid = false;
  private header = -1;
  private literal = 0;
  push(input: Uint8Array, emit: (out: Buffer) => void): void {
    const sink = new Sink(emit);
    for (const code of input) {
      if (this.literal > 0) {
        sink.byte(code);
        this.literal -= 1;
      } else if (this.header < 0) {
        if (code === 128) {
          this.done = true;
          break;
        }
        this.header = code;
      } else if (this.header < 128) {
        sink.byte(code);
        this.literal = this.header;
        this.header = -1;
      } else {
        for (let count = 257 - this.header; count > 0; count -= 1) sink.byte(code);
        this.header = -1;
      }
    }
    sink.flush();
  }
  finish(emit: (out: Buffer) => void): void {
    // pdf.js counts a cut literal run at its declared length (zeros where bytes are missing).
    const sink = new Sink(emit);
    for (; this.literal > 0; this.literal -= 1) sink.byte(0);
    sink.flush();
  }
}

/**
 * LZWDecode with pdf.js's code-length rule (`earlyChange`). A code past the next free one, or a
 * repeat right after a clear, is decoded differently by every reader: the stream is `invalid`.
 */
class LzwDecoder implements Decoder {
  done = false;
  invalid = false;
  private bits = 0;
  private cached = 0;
  private codeLength = 9;
  private nextCode = 258;
  private previous = -1;
  private readonly values = new Uint8Array(4096);
  private readonly lengths = new Uint16Array(4096);
  private readonly prefixes = new Uint16Array(4096);
  private sequence = new Uint8Array(4096);
  private sequenceLength = 0;
  constructor(private readonly earlyChange: number) {
    for (let code = 0; code < 256; code += 1) {
      this.values[code] = code;
      this.lengths[code] = 1;
    }
  }
  push(input: Uint8Array, emit: (out: Buffer) => void): void {
    const sink = new Sink(emit);
    for (const byte of input) {
      this.cached = ((this.cached << 8) | byte) & 0xffffff;
      this.bits += 8;
      while (this.bits >= this.codeLength && !this.done) {
        this.bits -= this.codeLength;
        this.code((this.cached >>> this.bits) & ((1 << this.codeLength) - 1), sink);
      }
      if (this.done) break;
    }
    sink.flush();
  }
  finish(): void {}
  private code(code: number, sink: Sink): void {
    const hadSequence = this.sequenceLength > 0;
    if (code === 256) {
      this.codeLength = 9;
      this.nextCode = 258;
      this.sequenceLength = 0;
      return;
    }
    if (code === 257 || code > this.nextCode || (code === this.nextCode && !hadSequence)) {
      this.invalid = code !== 257;
      this.done = true;
      return;
    }
    if (code < 256) {
      this.sequence[0] = code;
      this.sequenceLength = 1;
    } else if (code < this.nextCode) {
      this.sequenceLength = this.lengths[code] as number;
      for (let at = this.sequenceLength - 1, walk = code; at >= 0; at -= 1) {
        this.sequence[at] = this.values[walk] as number;
        walk = this.prefixes[walk] as number;
      }
    } else this.sequence[this.sequenceLength++] = this.sequence[0] as number;
    if (hadSequence && this.nextCode < 4096) {
      this.prefixes[this.nextCode] = this.previous;
      this.lengths[this.nextCode] = (this.lengths[this.previous] as number) + 1;
      this.values[this.nextCode] = this.sequence[0] as number;
      this.nextCode += 1;
      const reach = this.nextCode + this.earlyChange;
      if ((reach & (reach - 1)) === 0) this.codeLength = Math.min(Math.log2(reach) + 1, 12) | 0;
    } else if (hadSequence) {
      // A full dictionary: pdf.js stops adding; so does this decoder.
      this.nextCode += 1;
    }
    this.previous = code;
    for (let at = 0; at < this.sequenceLength; at += 1) sink.byte(this.sequence[at] as number);
  }
}
