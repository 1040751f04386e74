import { css } from 'lit';

/**
 * Styles every page shares. Colours keep a contrast ratio of at least 4.5:1 on their
 * background (axe checks it), and layouts wrap so a page works from 390 px wide.
 */
export const shared = css`
  :host {
    display: block;
    color: #1b1f24;
    font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif;
  }
  h1 { font-size: 1.4rem; margin: 0 0 0.75rem; }
  h2 { font-size: 1.1rem; margin: 1.25rem 0 0.5rem; }
  h3 { font-size: 1rem; margin: 1rem 0 0.4rem; }
  a { color: #0b4f8a; }
  button {
    font: inherit;
    padding: 0.35rem 0.8rem;
    border: 1px solid #0b4f8a;
    border-radius: 4px;
    background: #0b4f8a;
    color: #fff;
    cursor: pointer;
  }
  button.secondary { background: #fff; color: #0b4f8a; }
  button.danger { background: #a4161a; border-color: #a4161a; }
  button:disabled { opacity: 0.6; cursor: default; }
  button:focus-visible, a:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible {
    outline: 3px solid #f0a500;
    outline-offset: 1px;
  }
  input, select, textarea {
    font: inherit;
    padding: 0.3rem 0.45rem;
    border: 1px solid #6b7480;
    border-radius: 4px;
    background: #fff;
    color: inherit;
    max-width: 100%;
    box-sizing: border-box;
  }
  label { display: inline-flex; flex-direction: column; gap: 0.2rem; font-size: 0.9rem; max-width: 100%; }
  textarea { width: 40rem; }
  .row { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: flex-end; margin: 0.5rem 0; }
  .row > * { min-width: 0; max-width: 100%; }
  .muted { color: #57606a; }
  .error { color: #a4161a; font-weight: 600; }
  .ok { color: #1a7f37; }
  .card { border: 1px solid #d0d7de; border-radius: 6px; padding: 0.75rem; margin: 0.5rem 0; background: #fff; }
  .table-wrap { overflow-x: auto; max-width: 100%; }
  table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
  th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
  th { background: #f3f5f7; }
  pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85rem; }
  pre { white-space: pre-wrap; word-break: break-word; background: #f3f5f7; padding: 0.5rem; border-radius: 4px; margin: 0.3rem 0; }
  .badge { display: inline-block; padding: 0 0.45rem; border-radius: 10px; font-size: 0.8rem; border: 1px solid currentColor; }
  .status-completed, .status-succeeded, .status-ok, .status-sent, .status-delivered, .status-connected { color: #1a7f37; }
  .status-failed, .status-error, .status-cancelled, .status-killed, .status-timeout, .status-orphaned,
  .status-deadLetter { color: #a4161a; }
  .status-running, .status-pending, .status-waiting, .status-queued, .status-sending { color: #7a4d00; }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
