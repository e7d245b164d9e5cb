import { ImageFormatError, readImageDimensions, sniffImageType } from '../../src/images/image-format';
import { gif, jpeg, png, webpExtended, webpLossless, webpLossy } from '../support/images';

describe('image sniffing and header decoding', () => {
  it.each([
    ['image/png', png(3, 2), 3, 2],
    ['image/png', png(1, 1), 1, 1],
    ['image/gif', gif(640, 480), 640, 480],
    ['image/jpeg', jpeg(1024, 768), 1024, 768],
    ['image/jpeg', jpeg(17, 9, 0xc2), 17, 9], // progressive SOF2
    ['image/webp', webpLossy(300, 200), 300, 200],
    ['image/webp', webpLossless(16383, 5), 16383, 5],
    ['image/webp', webpExtended(20000, 1), 20000, 1],
  ] as const)('%s %#: recognised and measured', (type, bytes, width, height) => {
    expect(sniffImageType(bytes)).toBe(type);
    expect(readImageDimensions(type, bytes)).toEqual({ width, height });
  });

  it('does not recognise other bytes', () => {
    expect(sniffImageType(Buffer.from('hello world'))).toBeUndefined();
    expect(sniffImageType(Buffer.alloc(0))).toBeUndefined();
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WAVEfmt '))).toBeUndefined();
    expect(sniffImageType(Buffer.from('%PDF-1.7'))).toBeUndefined();
  });

  it('refuses truncated headers', () => {
    expect(() => readImageDimensions('image/png', png().subarray(0, 20))).toThrow(ImageFormatError);
    expect(() => readImageDimensions('image/gif', gif().subarray(0, 8))).toThrow(ImageFormatError);
    expect(() => readImageDimensions('image/webp', webpLossy().subarray(0, 26))).toThrow(ImageFormatError);
    expect(() => readImageDimensions('image/webp', webpLossless().subarray(0, 22))).toThrow(ImageFormatError);
    // SOI and APP0 only: no frame header.
    expect(() => readImageDimensions('image/jpeg', jpeg().subarray(0, 20))).toThrow(ImageFormatError);
  });

  it('refuses a JPEG whose scan starts before any frame header', () => {
    const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0xff, 0xd9]);
    expect(() => readImageDimensions('image/jpeg', bytes)).toThrow(/no frame header/);
  });

  it('refuses garbage between JPEG segments', () => {
    const bytes = Buffer.from([0xff, 0xd8, 0x12, 0x34]);
    expect(() => readImageDimensions('image/jpeg', bytes)).toThrow(ImageFormatError);
  });

  it('refuses a PNG without IHDR first', () => {
    const bytes = png();
    bytes.write('IDAT', 12, 'ascii');
    expect(() => readImageDimensions('image/png', bytes)).toThrow(/IHDR/);
  });

  it('refuses empty images', () => {
    expect(() => readImageDimensions('image/png', png(0, 5))).toThrow(/empty/);
    expect(() => readImageDimensions('image/gif', gif(5, 0))).toThrow(/empty/);
    expect(() => readImageDimensions('image/jpeg', jpeg(0, 0))).toThrow(/empty/);
  });

  it('refuses an unknown WebP chunk and a bad VP8 start code', () => {
    const unknown = webpLossy();
    unknown.write('ALPH', 12, 'ascii');
    expect(() => readImageDimensions('image/webp', unknown)).toThrow(/Unknown WebP chunk/);
    const badStart = webpLossy();
    badStart[23] = 0;
    expect(() => readImageDimensions('image/webp', badStart)).toThrow(/start code/);
  });

  it('reads a JPEG with fill bytes and restart markers before the frame', () => {
    const base = jpeg(8, 4);
    const bytes = Buffer.concat([base.subarray(0, 2), Buffer.from([0xff, 0xff, 0xd0]), base.subarray(2)]);
    expect(readImageDimensions('image/jpeg', bytes)).toEqual({ width: 8, height: 4 });
  });
});
