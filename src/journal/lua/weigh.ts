// weigh-n.lua called by name: how many of a ListTasks page's tasks fit within a bound of stored bytes, before the
// page is read (its keys are the page's own, as many as it has).
import { defineScript, replyNumber } from "../scripts.ts";

export const WEIGH = defineScript({
  name: "weigh",
  keys: [],
  args: ["bound", "withArtifacts"],
  decode: (reply) => replyNumber("weigh", reply),
});
