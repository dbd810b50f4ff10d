//! Frame Streams (libfstrm's `fstrm/control.h`), the transport dnstap rides on: data frames
//! are a 4-byte big-endian length and the payload; control frames are an escape (a zero
//! length), the control frame's length, its type and its fields. CoreDNS writes the
//! bidirectional form: READY(content type) -> the reader's ACCEPT -> START(content type),
//! data frames, then STOP -> the reader's FINISH.

/// The content type of dnstap's payloads, as CoreDNS announces it.
pub const CONTENT_TYPE: &[u8] = b"protobuf:dnstap.Dnstap";

/// The largest control frame a reader may send (libfstrm's `FSTRM_CONTROL_FRAME_LENGTH_MAX`).
pub const CONTROL_MAX: usize = 512;

/// Control frame types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// The reader takes the content type (answer to READY).
    Accept = 1,
    /// The writer begins sending data frames.
    Start = 2,
    /// The writer ends the stream.
    Stop = 3,
    /// The writer asks to send, offering content types.
    Ready = 4,
    /// The reader has seen STOP (answer to STOP).
    Finish = 5,
}

impl Control {
    fn from_u32(v: u32) -> Option<Control> {
        Some(match v {
            1 => Control::Accept,
            2 => Control::Start,
            3 => Control::Stop,
            4 => Control::Ready,
            5 => Control::Finish,
            _ => return None,
        })
    }
}

/// The one control field type: a content type.
const FIELD_CONTENT_TYPE: u32 = 1;

/// Appends a control frame of type `kind` with `content_type` as its one field (none when
/// empty): escape, length, type, field.
pub fn write_control(out: &mut Vec<u8>, kind: Control, content_type: &[u8]) {
    let fields = if content_type.is_empty() {
        0
    } else {
        8 + content_type.len()
    };
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&((4 + fields) as u32).to_be_bytes());
    out.extend_from_slice(&(kind as u32).to_be_bytes());
    if !content_type.is_empty() {
        out.extend_from_slice(&FIELD_CONTENT_TYPE.to_be_bytes());
        out.extend_from_slice(&(content_type.len() as u32).to_be_bytes());
        out.extend_from_slice(content_type);
    }
}

/// A control frame read back: its type and the content types it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The frame's type.
    pub kind: Control,
    /// Its CONTENT_TYPE fields, in order.
    pub content_types: Vec<Vec<u8>>,
}

/// Why a control frame was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlError {
    /// Not an escape: the peer sent a data frame where a control frame belongs.
    NotControl,
    /// Longer than [`CONTROL_MAX`].
    TooLong(usize),
    /// Lengths that do not add up, or an unknown type.
    Malformed,
}

impl std::fmt::Display for ControlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlError::NotControl => write!(f, "a data frame where a control frame belongs"),
            ControlError::TooLong(n) => write!(f, "control frame of {n} bytes"),
            ControlError::Malformed => write!(f, "malformed control frame"),
        }
    }
}

/// The length a control frame announces, from its first 8 bytes (escape and length).
pub fn control_len(head: [u8; 8]) -> Result<usize, ControlError> {
    if head[..4] != [0, 0, 0, 0] {
        return Err(ControlError::NotControl);
    }
    let n = u32::from_be_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if n > CONTROL_MAX {
        return Err(ControlError::TooLong(n));
    }
    if n < 4 {
        return Err(ControlError::Malformed);
    }
    Ok(n)
}

/// Parses a control frame's body (what follows the escape and the length).
pub fn parse_control(body: &[u8]) -> Result<Parsed, ControlError> {
    let word = |at: usize| -> Result<u32, ControlError> {
        body.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or(ControlError::Malformed)
    };
    let kind = Control::from_u32(word(0)?).ok_or(ControlError::Malformed)?;
    let mut content_types = Vec::new();
    let mut at = 4;
    while at < body.len() {
        let field = word(at)?;
        let len = word(at + 4)? as usize;
        let value = body
            .get(at + 8..at + 8 + len)
            .ok_or(ControlError::Malformed)?;
        if field == FIELD_CONTENT_TYPE {
            content_types.push(value.to_vec());
        }
        at += 8 + len;
    }
    Ok(Parsed {
        kind,
        content_types,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(kind: Control, ct: &[u8]) -> Parsed {
        let mut out = Vec::new();
        write_control(&mut out, kind, ct);
        let n = control_len(out[..8].try_into().unwrap()).unwrap();
        assert_eq!(n, out.len() - 8);
        parse_control(&out[8..]).unwrap()
    }

    #[test]
    fn ready_is_laid_out_as_libfstrm_writes_it() {
        let mut out = Vec::new();
        write_control(&mut out, Control::Ready, CONTENT_TYPE);
        let mut want = vec![0, 0, 0, 0, 0, 0, 0, 34, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 22];
        want.extend_from_slice(b"protobuf:dnstap.Dnstap");
        assert_eq!(out, want);
        // STOP has no field: escape, length 4, type 3.
        out.clear();
        write_control(&mut out, Control::Stop, b"");
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 3]);
    }

    #[test]
    fn control_frames_read_back() {
        for kind in [
            Control::Accept,
            Control::Start,
            Control::Stop,
            Control::Ready,
            Control::Finish,
        ] {
            let p = roundtrip(kind, CONTENT_TYPE);
            assert_eq!(p.kind, kind);
            assert_eq!(p.content_types, vec![CONTENT_TYPE.to_vec()]);
        }
        assert!(roundtrip(Control::Finish, b"").content_types.is_empty());
    }

    #[test]
    fn bad_control_frames_are_refused() {
        assert_eq!(
            control_len([0, 0, 0, 9, 0, 0, 0, 0]),
            Err(ControlError::NotControl)
        );
        assert_eq!(
            control_len([0, 0, 0, 0, 0, 0, 2, 1]),
            Err(ControlError::TooLong(513))
        );
        assert_eq!(
            control_len([0, 0, 0, 0, 0, 0, 0, 2]),
            Err(ControlError::Malformed)
        );
        // Unknown type, a field longer than the frame.
        assert_eq!(parse_control(&[0, 0, 0, 9]), Err(ControlError::Malformed));
        assert_eq!(
            parse_control(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 30, b'x']),
            Err(ControlError::Malformed)
        );
    }
}
