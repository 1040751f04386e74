// The write batching the daemon's WebSocket transport does (rpc-core's corkForTick): the first
// answer of a tick corks the connection's TCP socket and the next tick uncorks it, so every
// answer sent in that tick leaves in one write. Baselines started with `--batch` do the same, so
// the daemon is compared with a bare server on equal terms; without it they write once per frame.
export const batching = process.argv.includes('--batch');

const corked = new WeakSet();

function uncork(stream) {
  corked.delete(stream);
  stream.uncork();
}

/** Sends `text` on a `ws` socket, batched per tick when the server runs with `--batch`. */
export function sendAnswer(socket, text) {
  const stream = socket._socket;
  if (batching && stream && !corked.has(stream)) {
    corked.add(stream);
    stream.cork();
    process.nextTick(uncork, stream);
  }
  socket.send(text);
}
