// The size bounds of what a client may send, beyond the body cap and the nesting limit: ids, lists and short strings
// have ceilings that no real client reaches, so that nothing stored can be made large or slow field by field.

/** Longest id a client may send or name: messageId, taskId, contextId, a push config id, a page token's task id. */
export const MAX_ID_LENGTH = 256;
/** Longest page token (ours are far shorter). */
export const MAX_PAGE_TOKEN_LENGTH = 1024;
/** Most parts in one message. */
export const MAX_PARTS = 256;
/** Most entries in `extensions`, `referenceTaskIds` or `acceptedOutputModes`. */
export const MAX_LIST_ITEMS = 64;
/** Longest URI, URL, filename or media type a part or a list entry may hold. */
export const MAX_URI_LENGTH = 8192;
/** Longest short string (filename, media type, tenant, artifact name). */
export const MAX_NAME_LENGTH = 1024;
/** Most keys in one metadata object. */
export const MAX_METADATA_KEYS = 256;
/** Most bytes of JSON the metadata objects of one request may hold together. */
export const MAX_METADATA_BYTES = 65_536;
