// Push notification configuration (the flat 1.0 TaskPushNotificationConfig) and its credentials.
// Owns shapes only; the URL's form is checked in webhook-url.ts, its addresses and the delivery by the push area.

import { type Static, Type } from "@sinclair/typebox";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from "../limits.ts";

/**
 * Sent by the agent as `Authorization: <scheme> <credentials>` on each webhook call.
 * `scheme` is an IANA HTTP auth scheme, e.g. `Bearer`, compared case-insensitively.
 * `credentials` is a secret: never log it.
 */
export const AuthenticationInfoSchema = Type.Object({
  scheme: Type.String({ minLength: 1 }),
  credentials: Type.Optional(Type.String()),
});
export type AuthenticationInfo = Static<typeof AuthenticationInfoSchema>;

/**
 * One webhook registration for one task; a task may have several. `id` is assigned by the server
 * when absent. `taskId` is left empty when the config rides inline on SendMessage, and comes from
 * the params on `CreateTaskPushNotificationConfig`. This object is also that method's params.
 */
export const TaskPushNotificationConfigSchema = Type.Object({
  tenant: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH })),
  id: Type.Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  taskId: Type.Optional(Type.String({ maxLength: MAX_ID_LENGTH })),
  url: Type.String({ minLength: 1 }),
  token: Type.Optional(Type.String()),
  authentication: Type.Optional(AuthenticationInfoSchema),
});
export type TaskPushNotificationConfig = Static<typeof TaskPushNotificationConfigSchema>;
