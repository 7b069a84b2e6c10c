// Text put into server-rendered HTML (the embed, the API reference, the web app's shells, the payment stand-in's
// pages): escaped here once, for element content and double- or single-quoted attribute values alike.

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes the five characters that could end a text node or an attribute value. */
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!)
