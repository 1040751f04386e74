/** The daemon's version, reported by rpc.discover. */
export const VERSION = '0.1.0';
