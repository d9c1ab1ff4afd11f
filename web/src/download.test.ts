// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { downloadText } from './download';

afterEach(() => vi.restoreAllMocks());

describe('downloadText', () => {
  it('clicks a hidden <a download> for a UTF-8 Blob with a BOM, then removes it and revokes the URL', async () => {
    const blobs: Blob[] = [];
    URL.createObjectURL = vi.fn((b: Blob) => {
      blobs.push(b);
      return 'blob:test/1';
    });
    URL.revokeObjectURL = vi.fn();
    const clicked: { href: string; download: string; inDocument: boolean }[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.href, download: this.download, inDocument: document.body.contains(this) });
    });
    downloadText('a.csv', 'x,y\r\n');
    expect(clicked).toEqual([{ href: 'blob:test/1', download: 'a.csv', inDocument: true }]);
    expect(document.querySelectorAll('a').length).toBe(0);
    expect(blobs[0]!.type).toBe('text/csv;charset=utf-8');
    expect(new Uint8Array(await blobs[0]!.arrayBuffer()).slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
    expect(await blobs[0]!.text()).toBe('x,y\r\n'); // text() decodes UTF-8 and drops the BOM
    await new Promise((r) => setTimeout(r, 0));
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:test/1');
  });
});
