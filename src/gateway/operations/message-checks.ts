// Checks of an incoming message beyond its schema, all before anything is stored: the role, the media types the
// profile accepts, and each data part against the profile's input schema.

import type { Violation } from "../../protocol/index.ts";
import { ContentTypeNotSupportedError, InvalidParamsError, type Message } from "../../protocol/index.ts";
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
