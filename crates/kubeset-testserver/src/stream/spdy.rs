//! SPDY/3.1 framing as `kubectl port-forward` speaks it inside a WebSocket
//! (`SPDY/3.1+portforward.k8s.io`, client-go ≥ 1.31's tunnel): frames,
//! header blocks, and their zlib compression with the SPDY dictionary.
//! Pure rules, no I/O.
//!
//! Reading: the client's header blocks are one zlib stream per
//! connection, compressed against the dictionary of the SPDY/3 draft
//! (§2.6.10.1), decoded with miniz_oxide's inflater over a 32 KiB window
//! that starts with the dictionary. Writing: stored (uncompressed) deflate
//! blocks, which every inflater reads, in a zlib stream without a preset
//! dictionary (so the reader never needs it).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};

/// Largest frame accepted.
pub(crate) const MAX_FRAME: usize = 1 << 20;
/// Most decompressed header bytes per block, and header pairs per block.
const MAX_HEADER_BLOCK: usize = 64 << 10;
const MAX_PAIRS: u32 = 64;

pub(crate) const SYN_STREAM: u16 = 1;
pub(crate) const SYN_REPLY: u16 = 2;
pub(crate) const RST_STREAM: u16 = 3;
pub(crate) const PING: u16 = 6;
pub(crate) const GOAWAY: u16 = 7;
/// FLAG_FIN on data frames, SYN_STREAM and SYN_REPLY.
pub(crate) const FIN: u8 = 1;

/// The dictionary's words (each written with a 4-byte big-endian length).
const WORDS: &[&str] = &[
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
];
/// The dictionary's tail, written as is.
const TAIL: &str = concat!(
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505",
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request",
    "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented",
    "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ",
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,",
    "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=",
    "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
);
/// Its Adler-32, the DICTID a compressor writes in the zlib header.
const DICT_ID: u32 = 0xe3c6_a7c2;

/// The SPDY/3 header dictionary (1423 bytes).
pub(crate) fn dictionary() -> Vec<u8> {
    let mut d = Vec::with_capacity(1423);
    for w in WORDS {
        d.extend_from_slice(&(w.len() as u32).to_be_bytes());
        d.extend_from_slice(w.as_bytes());
    }
    d.extend_from_slice(TAIL.as_bytes());
    d
}

/// What is wrong with the client's bytes.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum SpdyError {
    #[error("SPDY frame of {len} bytes is over the limit")]
    TooLarge { len: usize },
    #[error("not SPDY/3: control frame version {version}")]
    Version { version: u16 },
    #[error("bad zlib header in a SPDY header block")]
    ZlibHeader,
    #[error("SPDY header block does not inflate ({status})")]
    Inflate { status: &'static str },
    #[error("malformed SPDY header block")]
    Headers,
    #[error("malformed SPDY {what} frame")]
    Malformed { what: &'static str },
}

/// One frame.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Control { kind: u16, flags: u8, data: Bytes },
    Data { stream: u32, flags: u8, data: Bytes },
}

/// The next whole frame in `buf`, if there is one.
pub(crate) fn parse_frame(buf: &mut BytesMut) -> Result<Option<Frame>, SpdyError> {
    if buf.len() < 8 {
        return Ok(None);
    }
    let len = usize::from(buf[5]) << 16 | usize::from(buf[6]) << 8 | usize::from(buf[7]);
    if len > MAX_FRAME {
        return Err(SpdyError::TooLarge { len });
    }
    if buf.len() < 8 + len {
        return Ok(None);
    }
    let head = buf.split_to(8);
    let data = buf.split_to(len).freeze();
    let flags = head[4];
    if head[0] & 0x80 != 0 {
        let version = u16::from_be_bytes([head[0] & 0x7f, head[1]]);
        if version != 3 {
            return Err(SpdyError::Version { version });
        }
        let kind = u16::from_be_bytes([head[2], head[3]]);
        Ok(Some(Frame::Control { kind, flags, data }))
    } else {
        let stream = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) & 0x7fff_ffff;
        Ok(Some(Frame::Data {
            stream,
            flags,
            data,
        }))
    }
}

/// A frame: its first word (a control frame's version and type, a data
/// frame's stream id), flags, the 24-bit length, the payload.
fn frame(first: [u8; 4], flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + payload.len());
    v.extend_from_slice(&first);
    v.push(flags);
    v.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    v.extend_from_slice(payload);
    v
}

fn control(kind: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let [k0, k1] = kind.to_be_bytes();
    frame([0x80, 0x03, k0, k1], flags, payload)
}

/// A data frame (`payload` at most [`MAX_FRAME`]).
pub(crate) fn data(stream: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    frame((stream & 0x7fff_ffff).to_be_bytes(), flags, payload)
}

/// SYN_REPLY for `stream` with a compressed header block.
pub(crate) fn syn_reply(stream: u32, flags: u8, block: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(4 + block.len());
    p.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    p.extend_from_slice(block);
    control(SYN_REPLY, flags, &p)
}

/// The same frame back (PING answers carry the client's id).
pub(crate) fn ping(data: &[u8]) -> Vec<u8> {
    control(PING, 0, data)
}

/// SYN_STREAM's stream id and (still compressed) header block.
pub(crate) fn syn_stream(data: &Bytes) -> Result<(u32, Bytes), SpdyError> {
    if data.len() < 10 {
        return Err(SpdyError::Malformed { what: "SYN_STREAM" });
    }
    let id = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) & 0x7fff_ffff;
    Ok((id, data.slice(10..)))
}

/// The stream id of a RST_STREAM.
pub(crate) fn rst_stream(data: &[u8]) -> Result<u32, SpdyError> {
    match data {
        [a, b, c, d, ..] => Ok(u32::from_be_bytes([*a, *b, *c, *d]) & 0x7fff_ffff),
        _ => Err(SpdyError::Malformed { what: "RST_STREAM" }),
    }
}

/// Name/value pairs of a decompressed header block.
pub(crate) fn parse_headers(mut b: &[u8]) -> Result<Vec<(String, String)>, SpdyError> {
    let word = |b: &mut &[u8]| -> Result<String, SpdyError> {
        if b.remaining() < 4 {
            return Err(SpdyError::Headers);
        }
        let n = b.get_u32() as usize;
        if b.remaining() < n {
            return Err(SpdyError::Headers);
        }
        let s = String::from_utf8_lossy(&b[..n]).into_owned();
        b.advance(n);
        Ok(s)
    };
    if b.remaining() < 4 {
        return Err(SpdyError::Headers);
    }
    let pairs = b.get_u32();
    if pairs > MAX_PAIRS {
        return Err(SpdyError::Headers);
    }
    let mut out = Vec::with_capacity(pairs as usize);
    for _ in 0..pairs {
        let name = word(&mut b)?;
        let value = word(&mut b)?;
        out.push((name.to_ascii_lowercase(), value));
    }
    Ok(out)
}

/// An uncompressed header block.
pub(crate) fn encode_headers(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut v = BytesMut::new();
    v.put_u32(pairs.len() as u32);
    for (k, val) in pairs {
        v.put_u32(k.len() as u32);
        v.put_slice(k.as_bytes());
        v.put_u32(val.len() as u32);
        v.put_slice(val.as_bytes());
    }
    v.to_vec()
}

/// The client's header stream: one zlib stream across the connection.
pub(crate) struct Inflater {
    dec: Box<DecompressorOxide>,
    window: Vec<u8>,
    pos: usize,
    /// zlib header bytes still to read (2, plus 4 with a dictionary).
    header: Vec<u8>,
    header_done: bool,
}

const WINDOW: usize = 32 << 10;

impl Inflater {
    pub(crate) fn new() -> Self {
        let dict = dictionary();
        let mut window = vec![0u8; WINDOW];
        window[..dict.len()].copy_from_slice(&dict);
        Self {
            dec: Box::default(),
            window,
            pos: dict.len(),
            header: Vec::with_capacity(6),
            header_done: false,
        }
    }

    /// The decompressed bytes of one header block.
    pub(crate) fn inflate(&mut self, mut input: &[u8]) -> Result<Vec<u8>, SpdyError> {
        if !self.header_done {
            while self.header.len() < 2 && !input.is_empty() {
                self.header.push(input[0]);
                input = &input[1..];
            }
            if self.header.len() < 2 {
                return Ok(Vec::new());
            }
            let (cmf, flg) = (self.header[0], self.header[1]);
            if cmf & 0x0f != 8 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
                return Err(SpdyError::ZlibHeader);
            }
            let want = if flg & 0x20 != 0 { 6 } else { 2 };
            while self.header.len() < want && !input.is_empty() {
                self.header.push(input[0]);
                input = &input[1..];
            }
            if self.header.len() < want {
                return Ok(Vec::new());
            }
            if want == 6 && self.header[2..6] != DICT_ID.to_be_bytes() {
                return Err(SpdyError::ZlibHeader);
            }
            self.header_done = true;
        }
        let mut out = Vec::new();
        loop {
            let (status, read, written) = decompress(
                &mut self.dec,
                input,
                &mut self.window,
                self.pos,
                inflate_flags::TINFL_FLAG_HAS_MORE_INPUT,
            );
            out.extend_from_slice(&self.window[self.pos..self.pos + written]);
            self.pos = (self.pos + written) & (WINDOW - 1);
            input = &input[read..];
            if out.len() > MAX_HEADER_BLOCK {
                return Err(SpdyError::Headers);
            }
            match status {
                TINFLStatus::HasMoreOutput => {}
                TINFLStatus::NeedsMoreInput | TINFLStatus::Done if input.is_empty() => {
                    return Ok(out);
                }
                TINFLStatus::NeedsMoreInput | TINFLStatus::Done => {}
                TINFLStatus::FailedCannotMakeProgress => {
                    return Err(SpdyError::Inflate {
                        status: "cannot make progress",
                    });
                }
                _ => return Err(SpdyError::Inflate { status: "corrupt" }),
            }
        }
    }
}

/// Our header stream: stored blocks after one zlib header, each header
/// block ending with a sync flush.
#[derive(Default)]
pub(crate) struct Deflater {
    started: bool,
}

impl Deflater {
    /// `block` as the next part of the zlib stream.
    pub(crate) fn deflate(&mut self, block: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(block.len() + 8);
        if !self.started {
            // CMF: deflate, 32 KiB window; FLG: no dictionary, check bits.
            out.extend_from_slice(&[0x78, 0x01]);
            self.started = true;
        }
        for piece in block.chunks(0xffff) {
            let n = piece.len() as u16;
            out.push(0x00); // not final, stored
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&(!n).to_le_bytes());
            out.extend_from_slice(piece);
        }
        // A sync flush (an empty stored block), as zlib's Z_SYNC_FLUSH ends
        // each block: Go's inflater reads the next block's header right
        // after a stored block, and it must be inside this frame.
        out.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adler32(b: &[u8]) -> u32 {
        let (mut a, mut s) = (1u32, 0u32);
        for &x in b {
            a = (a + u32::from(x)) % 65521;
            s = (s + a) % 65521;
        }
        s << 16 | a
    }

    #[test]
    fn the_dictionary_is_the_spec_one() {
        let d = dictionary();
        assert_eq!(d.len(), 1423);
        assert_eq!(adler32(&d), DICT_ID);
    }

    #[test]
    fn stored_blocks_inflate_and_headers_round_trip() {
        let pairs = [("streamtype", "data"), ("port", "8080"), ("requestid", "0")];
        let mut def = Deflater::default();
        let mut inf = Inflater::new();
        for _ in 0..3 {
            let z = def.deflate(&encode_headers(&pairs));
            let raw = inf.inflate(&z).unwrap();
            let got = parse_headers(&raw).unwrap();
            assert_eq!(got[1], ("port".to_owned(), "8080".to_owned()));
        }
    }

    #[test]
    fn frames_parse_in_pieces() {
        let mut buf = BytesMut::new();
        let f = data(5, FIN, b"abc");
        assert_eq!(f, [0, 0, 0, 5, FIN, 0, 0, 3, b'a', b'b', b'c']);
        let [k0, k1] = PING.to_be_bytes();
        assert_eq!(ping(&[7]), [0x80, 3, k0, k1, 0, 0, 0, 1, 7]);
        buf.extend_from_slice(&f[..6]);
        assert_eq!(parse_frame(&mut buf).unwrap(), None);
        buf.extend_from_slice(&f[6..]);
        buf.extend_from_slice(&ping(&[0, 0, 0, 1]));
        assert_eq!(
            parse_frame(&mut buf).unwrap(),
            Some(Frame::Data {
                stream: 5,
                flags: FIN,
                data: Bytes::from_static(b"abc")
            })
        );
        assert!(matches!(
            parse_frame(&mut buf).unwrap(),
            Some(Frame::Control { kind: PING, .. })
        ));
        let mut big = BytesMut::from(&[0u8, 0, 0, 1, 0, 0xff, 0xff, 0xff][..]);
        assert!(matches!(
            parse_frame(&mut big),
            Err(SpdyError::TooLarge { .. })
        ));
        assert!(parse_headers(&[0, 0, 0, 9]).is_err());
    }
}
