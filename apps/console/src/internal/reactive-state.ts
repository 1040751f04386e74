import type { PropertyDeclarations } from 'lit';

/**
 * Lit's declarations making the named fields of `T` internal reactive state (`{ state: true }`:
 * assigning one re-renders the element; no attribute). The names are checked against the
 * class, so renaming a field cannot silently leave it out of the updates.
 */
export function reactiveState<T>(...names: Array<keyof T & string>): PropertyDeclarations {
  return Object.fromEntries(names.map((name) => [name, { state: true }]));
}
