// ListTasks: the caller's tasks in this profile, newest status first, filtered and paged by an opaque token (a position
// in the client's index of the profile or of one context: a page costs the same however many tasks the client has).
import { toTask } from "../../journal/index.ts";
import type { ListTasksResponse } from "../../protocol/index.ts";
import type { OperationCall } from "./operation-call.ts";

export const DEFAULT_PAGE_SIZE = 50;

/**
 * Milliseconds of an RFC 3339 UTC timestamp (already checked by the schema), rounded up when it has a finer fraction:
 * the filter is inclusive (status timestamp ≥ value) and stored timestamps are whole milliseconds.
 */
export function timestampMs(timestamp: string): number {
  const match = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(timestamp);
  const whole = Date.parse(`${match?.[1] ?? timestamp}Z`);
  const fraction = match?.[2] ?? "";
  const ms = Number(fraction.slice(0, 3).padEnd(3, "0"));
  const finer = /[1-9]/.test(fraction.slice(3)) ? 1 : 0;
  return whole + ms + finer;
}

export async function listTasks(call: OperationCall<"ListTasks">): Promise<ListTasksResponse> {
  const { context, client, params } = call;
  const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
  const page = await context.journal.list(client.id, {
    contextId: params.contextId,
    status: params.status,
    pageSize,
    pageToken: params.pageToken === "" ? undefined : params.pageToken,
    statusTimestampAfterMs:
      params.statusTimestampAfter === undefined ? undefined : timestampMs(params.statusTimestampAfter),
    profile: call.profile.profile.name,
    includeArtifacts: params.includeArtifacts === true,
    maxBytes: context.config.server.maxListBytes,
  });
  const view = { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts === true };
  return {
    tasks: page.records.map((record) => toTask(record, view)),
    nextPageToken: page.nextPageToken,
    pageSize,
    totalSize: page.totalSize,
  };
}
