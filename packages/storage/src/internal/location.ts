import { resolve as resolvePath } from 'node:path';

/** Where a database lives, derived from `url` or `dataDir`. */
export interface Location {
  kind: 'file' | 'remote' | 'memory';
  /** The URL handed to libsql; for remote databases it may carry credentials. */
  clientUrl: string;
  /** The same URL with user info and the `authToken` query parameter removed. */
  safeUrl: string;
  /** Absolute or relative path of the database file, for `kind === 'file'`. */
  filePath?: string;
}

const REMOTE_SCHEMES = new Set(['libsql', 'http', 'https', 'ws', 'wss']);

// libsql percent-decodes the path of a file URL, so characters that would end
// the path early (or a literal percent sign) must be encoded going in.
function encodeFilePath(path: string): string {
  return path.replace(/[%?#]/g, (character) => encodeURIComponent(character));
}

/** Builds the `file:` URL of `fileName` inside `dataDir` (resolved to an absolute path). */
export function fileUrlFor(dataDir: string, fileName: string): string {
  return `file:${encodeFilePath(resolvePath(dataDir, fileName))}`;
}

/** Removes user info and an `authToken` query parameter from a URL. */
export function stripCredentials(url: string): string {
  const hashAt = url.indexOf('#');
  const fragment = hashAt >= 0 ? url.slice(hashAt) : '';
  const beforeFragment = hashAt >= 0 ? url.slice(0, hashAt) : url;
  const queryAt = beforeFragment.indexOf('?');
  let base = queryAt >= 0 ? beforeFragment.slice(0, queryAt) : beforeFragment;
  const query = queryAt >= 0 ? beforeFragment.slice(queryAt + 1) : '';
  const authority = /^([A-Za-z][A-Za-z.+-]*:\/\/)([^/]*)(.*)$/su.exec(base);
  if (authority !== null) {
    const host = authority[2] ?? '';
    base = `${authority[1]}${host.slice(host.lastIndexOf('@') + 1)}${authority[3] ?? ''}`;
  }
  const kept = query.split('&').filter((pair) => pair !== '' && pair.split('=')[0] !== 'authToken');
  return `${base}${kept.length > 0 ? `?${kept.join('&')}` : ''}${fragment}`;
}

/** Classifies a URL and works out the file path for local databases. */
export function parseLocation(url: string): Location {
  const schemeMatch = /^([A-Za-z][A-Za-z.+-]*):/.exec(url);
  if (url === ':memory:') {
    return { kind: 'memory', clientUrl: url, safeUrl: url };
  }
  if (schemeMatch === null) {
    throw new Error(
      `"${stripCredentials(url)}" is not a URL; use file:<path>, libsql://, http(s):// or ws(s)://`,
    );
  }
  const scheme = schemeMatch[1]!.toLowerCase();
  if (REMOTE_SCHEMES.has(scheme)) {
    return { kind: 'remote', clientUrl: url, safeUrl: stripCredentials(url) };
  }
  if (scheme !== 'file') {
    throw new Error(`URL scheme "${scheme}:" is not supported; use file:, libsql:, http(s): or ws(s):`);
  }
  const fileMatch = /^file:(\/\/[^/?#]*)?([^?#]*)/su.exec(url);
  const rawPath = fileMatch?.[2] ?? '';
  if (rawPath === ':memory:') {
    return { kind: 'memory', clientUrl: url, safeUrl: url };
  }
  if (rawPath === '') {
    throw new Error(`"${url}" has no file path`);
  }
  return {
    kind: 'file',
    clientUrl: url,
    safeUrl: stripCredentials(url),
    filePath: decodeURIComponent(rawPath),
  };
}

/** Secrets embedded in a URL (a password in the user info, an `authToken` parameter). */
export function credentialsIn(url: string): string[] {
  const found: string[] = [];
  const userInfo = /^[A-Za-z][A-Za-z.+-]*:\/\/([^/?#]*)@/su.exec(url)?.[1];
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':');
    found.push(colon >= 0 ? userInfo.slice(colon + 1) : userInfo);
  }
  for (const match of url.matchAll(/[?&]authToken=([^&#]*)/g)) {
    const value = match[1] ?? '';
    found.push(value);
    try {
      found.push(decodeURIComponent(value.replaceAll('+', ' ')));
    } catch {
      // a malformed escape cannot be decoded, and the raw value is already covered
    }
  }
  return found.filter((secret) => secret.length > 0);
}
