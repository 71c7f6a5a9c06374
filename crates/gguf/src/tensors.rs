//! Checks on the tensor table: each tensor info on its own as it is read, then the
//! whole table against the data section and the file.

use std::collections::HashSet;

use crate::error::GgufError;
use crate::header::TensorInfo;
use crate::types::GgmlType;

/// Validates one tensor info as read from the file: nonzero dims whose product fits an
/// i64, a supported type, rows of whole blocks, a byte size and end offset that fit a
/// u64, an offset that is a multiple of `alignment`, a name not seen before.
pub(crate) fn validate_tensor(
    name: &str,
    dims: Vec<u64>,
    type_id: u32,
    offset: u64,
    alignment: u64,
    seen: &HashSet<String>,
) -> Result<TensorInfo, GgufError> {
    let name = name.to_owned();
    if dims.contains(&0) {
        return Err(GgufError::ZeroDim { tensor: name, dims });
    }
    let n_elems = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)).filter(|&n| n <= i64::MAX as u64);
    let Some(n_elems) = n_elems else {
        return Err(GgufError::ElementCountOverflow { tensor: name, dims });
    };
    let ty = match GgmlType::from_id(type_id) {
        Ok(ty) => ty,
        Err(type_name) => return Err(GgufError::UnsupportedType { tensor: name, type_name, id: type_id }),
    };
    let row_len = dims.first().copied().unwrap_or(1);
    if row_len % ty.block_elems() as u64 != 0 {
        return Err(GgufError::RowNotBlockMultiple { tensor: name, row_len, ty });
    }
    let Some(n_bytes) = ty.bytes_for(n_elems).filter(|&b| offset.checked_add(b).is_some()) else {
        return Err(GgufError::ElementCountOverflow { tensor: name, dims });
    };
    if offset % alignment != 0 {
        return Err(GgufError::MisalignedOffset { tensor: name, offset, alignment });
    }
    if seen.contains(&name) {
        return Err(GgufError::DuplicateTensor { name });
    }
    Ok(TensorInfo { name, dims, ty, offset, n_elems, n_bytes })
}

/// Checks the complete table (each tensor already validated): absolute offsets fit a
/// u64, no two tensors overlap, and (when the file length is known) every tensor lies
/// inside the file.
pub(crate) fn check_table(tensors: &[TensorInfo], data_offset: u64, file_len: Option<u64>) -> Result<(), GgufError> {
    for t in tensors {
        if data_offset.checked_add(t.data_range().end).is_none() {
            return Err(GgufError::ElementCountOverflow { tensor: t.name.clone(), dims: t.dims.clone() });
        }
    }
    let mut order: Vec<&TensorInfo> = tensors.iter().collect();
    order.sort_by_key(|t| t.offset);
    for pair in order.windows(2) {
        let (a, b) = (pair[0].data_range(), pair[1].data_range());
        if a.end > b.start {
            return Err(GgufError::Overlap {
                a: pair[0].name.clone(),
                a_range: (a.start, a.end),
                b: pair[1].name.clone(),
                b_range: (b.start, b.end),
            });
        }
    }
    if let Some(file_len) = file_len {
        for t in tensors {
            let r = t.data_range();
            let (start, end) = (data_offset + r.start, data_offset + r.end);
            if end > file_len {
                return Err(GgufError::TensorOutOfBounds { tensor: t.name.clone(), start, end, file_len });
            }
        }
    }
    Ok(())
}
