/**
 * Text Tender keeps from or matches against what others sent. PostgreSQL refuses a NUL in `text`
 * and `jsonb` (and `jsonb` refuses `\u0000` escapes), while the memory storage keeps anything: so
 * text from outside is either made storable here (a receiver's answer) or refused (a search filter),
 * and both storages see the same characters.
 */

/** C0 controls but tab, newline and carriage return; and UTF-16 halves without their pair. */
const UNSTORABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * `text` with every unstorable character (see UNSTORABLE) replaced by U+FFFD, as a decoder does
 * with invalid UTF-8: what a webhook receiver answered, kept for the log.
 */
export const storable = (text: string): string => text.replace(UNSTORABLE, "\ufffd")

/** Whether `text` holds a control character (C0, DEL or C1): no filter or name needs one. */
export const hasControl = (text: string): boolean => /\p{Cc}/u.test(text)
