// Text that agents, recipes and servers wrote, made safe to print to a
// terminal: an agent's verdict or failure reason reached the screen as it was,
// so an escape sequence in it could set the window title, clear the screen or
// hide what followed. Control characters are shown as \u escapes instead.

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
export const controlChars = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Those but newline and tab: the controls a multi-line message may keep. */
const controlsButLines = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

export const escapeControl = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every control character but newline and tab shown as a \u escape. */
export function terminalText(text: string): string {
  return text.replace(controlsButLines, escapeControl);
}
