//! The RFC 1035 master-file parser (placeholder; being written).
