/** Float32 vector as the little-endian bytes libsql stores. */
export function toBlob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** Bytes read from libsql back to a float32 vector (copied, so the result is aligned). */
export function fromBlob(blob: unknown): Float32Array | undefined {
  if (blob instanceof ArrayBuffer) return new Float32Array(blob.slice(0));
  if (blob instanceof Uint8Array) {
    const copy = new Uint8Array(blob.byteLength);
    copy.set(blob);
    return new Float32Array(copy.buffer);
  }
  return undefined;
}

/** Scales `vector` to unit length in place (a zero vector stays zero). */
export function normalise(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) return vector;
  const inverse = 1 / Math.sqrt(norm);
  for (let index = 0; index < vector.length; index++) vector[index] = vector[index]! * inverse;
  return vector;
}

/** True when every component is a finite number. */
export function isFiniteVector(vector: Float32Array): boolean {
  for (const value of vector) if (!Number.isFinite(value)) return false;
  return true;
}
