/**
 * The options every agentd error class takes after its `code` and `message`
 * (house style: one error class per package with a string `code`, `cause` and
 * optional `data`). Each package keeps its own class and `XErrorOptions` name;
 * the name is this shape, narrowed where a package's `data` has a known form.
 *
 * @typeParam TData - the shape of `data`; a plain record unless a package says more.
 */
export interface AgentdErrorOptions<TData = Record<string, unknown>> {
  /** The underlying error, kept as the standard `Error.cause` for logs; never sent to a client. */
  cause?: unknown;
  /** Structured detail for callers and logs (ids, counts, `issues`); never secrets or message bodies. */
  data?: TData;
}
