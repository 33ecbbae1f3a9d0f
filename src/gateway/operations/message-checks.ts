// Checks of an incoming message beyond its schema, all before anything is stored: the role, the media types the
// profile accepts, and each data part against the profile's input schema.

import {
  ContentTypeNotSupportedError,
  InvalidParamsError,
  MAX_METADATA_BYTES,
  type Message,
  type Violation,
} from "../../protocol/index.ts";
import type { ProfileRuntime } from "../gateway-context.ts";

/** Whether a media type is among `modes` (which may hold `type/*` or `*\/*`); parameters are ignored. */
export function acceptsMediaType(modes: readonly string[], mediaType: string): boolean {
  const wanted = mediaType.split(";")[0]?.trim().toLowerCase() ?? "";
  const [type] = wanted.split("/");
  return modes.some((mode) => {
    const m = mode.toLowerCase();
    return m === wanted || m === "*/*" || m === `${type}/*`;
  });
}

/**
 * Throws InvalidParamsError (-32602) when the metadata objects of a SendMessage request (the request's, the message's
 * and its parts') hold more than MAX_METADATA_BYTES of JSON together.
 */
export function checkMetadataSize(requestMetadata: unknown, message: Message): void {
  let bytes = requestMetadata === undefined ? 0 : JSON.stringify(requestMetadata).length;
  if (message.metadata !== undefined) bytes += JSON.stringify(message.metadata).length;
  for (const part of message.parts) if (part.metadata !== undefined) bytes += JSON.stringify(part.metadata).length;
  if (bytes > MAX_METADATA_BYTES) {
    throw new InvalidParamsError(`Invalid params: metadata: more than ${MAX_METADATA_BYTES} bytes of JSON`, [
      { field: "metadata", description: `the request's metadata objects hold at most ${MAX_METADATA_BYTES} bytes` },
    ]);
  }
}

/**
 * The message as it will be stored: empty `taskId` / `contextId` mean unset (ProtoJSON omits defaults).
 * Throws InvalidParamsError (-32602) or ContentTypeNotSupportedError (-32005).
 */
export function checkIncomingMessage(message: Message, runtime: ProfileRuntime): Message {
  if (message.role !== "ROLE_USER") {
    throw new InvalidParamsError("Invalid params: message.role: a client sends ROLE_USER messages", [
      { field: "message.role", description: "Expected ROLE_USER" },
    ]);
  }
  const { profile, inputChecker } = runtime;
  for (const part of message.parts) {
    if (part.mediaType !== undefined && part.mediaType !== "" && !acceptsMediaType(profile.inputModes, part.mediaType))
      throw new ContentTypeNotSupportedError(part.mediaType);
  }
  if (inputChecker) {
    const violations: Violation[] = [];
    message.parts.forEach((part, index) => {
      if ("data" in part && part.data !== undefined)
        for (const { pointer, message } of inputChecker(part.data)) {
          const path = pointer === "/" ? "" : pointer.slice(1).split("/").join(".");
          violations.push({
            field: `message.parts[${index}].data${path === "" ? "" : `.${path}`}`,
            description: message,
          });
        }
    });
    const first = violations[0];
    if (first) {
      throw new InvalidParamsError(
        `Data does not match the input schema of ${profile.name}: ${first.field}: ${first.description}`,
        violations.slice(0, 10),
      );
    }
  }
  const stored: Message = { ...message };
  if (stored.taskId === "") delete stored.taskId;
  if (stored.contextId === "") delete stored.contextId;
  return stored;
}
