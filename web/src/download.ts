// A client-side file download: the text as a Blob behind an object URL,
// clicked through a temporary <a download>. Nothing goes to a server.

/** Starts the download of text as a file named name. */
export function downloadText(name: string, text: string, type = 'text/csv;charset=utf-8'): void {
  // A UTF-8 byte order mark, so spreadsheet programs read the file as UTF-8.
  const url = URL.createObjectURL(new Blob(['\uFEFF', text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  try {
    a.click();
  } finally {
    a.remove();
    // Revoked after the click has been handled: revoking at once can cancel the download in some browsers.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}
