// Task lifecycle states and message roles as A2A 1.0 puts them on the wire (ProtoJSON enum names).
// Owns the terminal/interrupted classification; never emits or accepts the *_UNSPECIFIED values.

import { type Static, Type } from "@sinclair/typebox";
import { PROTO_ENUM } from "../proto-json.ts";

/** The proto's TaskState values in number order; a request may send either form. */
export const TASK_STATE_NUMBERS = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
] as const;

/** The eight real task states; `TASK_STATE_UNSPECIFIED` is deliberately absent (a request's 0 reads as unset). */
export const TaskStateSchema = Type.Union(
  [
    Type.Literal("TASK_STATE_SUBMITTED"),
    Type.Literal("TASK_STATE_WORKING"),
    Type.Literal("TASK_STATE_INPUT_REQUIRED"),
    Type.Literal("TASK_STATE_AUTH_REQUIRED"),
    Type.Literal("TASK_STATE_COMPLETED"),
    Type.Literal("TASK_STATE_FAILED"),
    Type.Literal("TASK_STATE_CANCELED"),
    Type.Literal("TASK_STATE_REJECTED"),
  ],
  { [PROTO_ENUM]: TASK_STATE_NUMBERS },
);
export type TaskState = Static<typeof TaskStateSchema>;

export const TASK_STATES: readonly TaskState[] = TaskStateSchema.anyOf.map((literal) => literal.const);

/** A terminal task is immutable: no more messages, no cancel, no subscribe. */
export const TERMINAL_STATES = [
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
] as const satisfies readonly TaskState[];
export type TerminalState = (typeof TERMINAL_STATES)[number];

/** An interrupted task waits for the client; a blocking SendMessage returns at these states. */
export const INTERRUPTED_STATES = [
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_AUTH_REQUIRED",
] as const satisfies readonly TaskState[];
export type InterruptedState = (typeof INTERRUPTED_STATES)[number];

const TERMINAL_SET: ReadonlySet<TaskState> = new Set(TERMINAL_STATES);
const INTERRUPTED_SET: ReadonlySet<TaskState> = new Set(INTERRUPTED_STATES);

export function isTerminal(state: TaskState): state is TerminalState {
  return TERMINAL_SET.has(state);
}

export function isInterrupted(state: TaskState): state is InterruptedState {
  return INTERRUPTED_SET.has(state);
}

/** `ROLE_USER` is client→server, `ROLE_AGENT` server→client; `ROLE_UNSPECIFIED` is never valid. */
export const RoleSchema = Type.Union([Type.Literal("ROLE_USER"), Type.Literal("ROLE_AGENT")], {
  [PROTO_ENUM]: ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"],
});
export type Role = Static<typeof RoleSchema>;

export const ROLES: readonly Role[] = RoleSchema.anyOf.map((literal) => literal.const);
