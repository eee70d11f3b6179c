// Copying text through the terminal (OSC 52), which also works over ssh and inside tmux when
// set-clipboard is on. The caller shows the text too, for terminals that ignore the escape.
export function osc52(text: string): string {
  const seq = `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`;
  // Inside tmux the sequence must be wrapped to reach the outer terminal.
  return process.env.TMUX ? `\x1bPtmux;\x1b${seq}\x1b\\` : seq;
}

export function copyToClipboard(text: string, out: NodeJS.WriteStream = process.stdout): void {
  if (out.isTTY) out.write(osc52(text));
}
