/**
 * What a caller of the model-facing APIs (the OpenAI-compatible `/v1`) brings to one agent turn
 * beyond its message: its own tools, their results, images and sampling/format settings.
 */

/** A tool the caller runs itself, offered to the model beside the agent's own. */
export interface ClientToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input. */
  inputSchema: Record<string, unknown>;
}

/** A call the model made to a client tool, for the caller to run. */
export interface ClientToolCall {
  toolCallId: string;
  toolName: string;
  /** Parsed JSON input. */
  input: unknown;
}

/** The result of one client tool call, brought back by the caller (the call names the tool). */
export interface ClientToolResult {
  toolCallId: string;
  content: string;
  isError?: boolean;
}

/** An image in a user message: an `https:`/`http:` URL or a `data:image/...` URL. */
export interface TurnImage {
  url: string;
}

/** Which tool the model must call: any or none at its choice, some tool, or the named one. */
export type TurnToolChoice = 'auto' | 'none' | 'required' | { toolName: string };

/** The shape the answer must take: free text, any JSON object, or JSON matching `schema`. */
export type TurnResponseFormat =
  | { type: 'text' }
  | { type: 'json'; schema?: Record<string, unknown>; name?: string; description?: string };

/** Sampling and output settings a caller asks of the model; absent fields are the provider's defaults. */
export interface TurnCallOptions {
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  seed?: number;
  responseFormat?: TurnResponseFormat;
  toolChoice?: TurnToolChoice;
}
