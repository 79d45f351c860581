// Shared by tab.mjs (in the tab) and actor.mjs (in Node): the prefix of the console messages that
// carry protocol events out of the tab.

/** Marks a tab's console message as one protocol event, JSON after the mark. */
export const EVENT_MARK = "conformance-event ";
