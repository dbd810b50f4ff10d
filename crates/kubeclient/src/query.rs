//! Query strings: each value percent-encoded as Go's `url.Values.Encode` does (unreserved
//! characters kept, space as `+`), so selectors such as `status.phase!=Failed,a in (b,c)`
//! reach the API server intact.

/// Appends `key=value` to `q` (with `&` before it when `q` is not empty).
pub(crate) fn push(q: &mut String, key: &str, value: &str) {
    if !q.is_empty() {
        q.push('&');
    }
    encode_into(q, key);
    q.push('=');
    encode_into(q, value);
}

fn encode_into(out: &mut String, s: &str) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.push('%');
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 15) as usize] as char);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_are_encoded_as_go_does() {
        let mut q = String::new();
        push(&mut q, "limit", "500");
        push(
            &mut q,
            "fieldSelector",
            "status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown",
        );
        push(&mut q, "labelSelector", "app in (a, b),!x,tier=fe/1");
        assert_eq!(
            q,
            "limit=500&fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed%2Cstatus.phase%21%3DUnknown\
             &labelSelector=app+in+%28a%2C+b%29%2C%21x%2Ctier%3Dfe%2F1"
        );
        let mut q = String::new();
        push(&mut q, "continue", "eyJ2Ijoi+/=");
        assert_eq!(q, "continue=eyJ2Ijoi%2B%2F%3D");
        let mut q = String::new();
        push(&mut q, "k", "é");
        assert_eq!(q, "k=%C3%A9");
    }
}
