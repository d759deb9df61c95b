//! Windows error codes and the errno values fio reports for them.

use windows_sys::Win32::Foundation as wf;

/// An errno with no Windows error of its own is kept as an
/// application-defined code (bit 29 set): it maps back to itself.
const ERRNO_BIT: i32 = 0x2000_0000;

/// (Windows error, errno): the first entry for an errno is the one an
/// errno becomes.
const TABLE: &[(u32, i32)] = &[
    (wf::ERROR_FILE_NOT_FOUND, libc::ENOENT),
    (wf::ERROR_PATH_NOT_FOUND, libc::ENOENT),
    (wf::ERROR_INVALID_DRIVE, libc::ENOENT),
    (wf::ERROR_BAD_PATHNAME, libc::ENOENT),
    (wf::ERROR_BAD_NETPATH, libc::ENOENT),
    (wf::ERROR_INVALID_NAME, libc::ENOENT),
    (wf::ERROR_FILE_EXISTS, libc::EEXIST),
    (wf::ERROR_ALREADY_EXISTS, libc::EEXIST),
    (wf::ERROR_ACCESS_DENIED, libc::EACCES),
    (wf::ERROR_LOCK_VIOLATION, libc::EACCES),
    (wf::ERROR_PRIVILEGE_NOT_HELD, libc::EPERM),
    (wf::ERROR_INVALID_PARAMETER, libc::EINVAL),
    (wf::ERROR_INVALID_FUNCTION, libc::EINVAL),
    (wf::ERROR_INVALID_USER_BUFFER, libc::EINVAL),
    (wf::ERROR_NOT_A_REPARSE_POINT, libc::EINVAL),
    (wf::ERROR_NEGATIVE_SEEK, libc::EINVAL),
    (wf::ERROR_DISK_FULL, libc::ENOSPC),
    (wf::ERROR_HANDLE_DISK_FULL, libc::ENOSPC),
    (wf::ERROR_CANT_RESOLVE_FILENAME, libc::ELOOP),
    (wf::ERROR_DIRECTORY, libc::ENOTDIR),
    (wf::ERROR_DIRECTORY_NOT_SUPPORTED, libc::EISDIR),
    (wf::ERROR_BUSY, libc::EBUSY),
    (wf::ERROR_SHARING_VIOLATION, libc::EBUSY),
    (wf::ERROR_USER_MAPPED_FILE, libc::EBUSY),
    (wf::ERROR_WRITE_PROTECT, libc::EROFS),
    (wf::ERROR_IO_DEVICE, libc::EIO),
    (wf::ERROR_CRC, libc::EIO),
    (wf::ERROR_FILE_CORRUPT, libc::EIO),
    (wf::ERROR_DISK_CORRUPT, libc::EIO),
    (wf::ERROR_SECTOR_NOT_FOUND, libc::EIO),
    (wf::ERROR_NOT_READY, libc::EIO),
    (wf::ERROR_OPERATION_ABORTED, libc::EINTR),
    (wf::ERROR_NOT_ENOUGH_MEMORY, libc::ENOMEM),
    (wf::ERROR_OUTOFMEMORY, libc::ENOMEM),
    (wf::ERROR_NO_SYSTEM_RESOURCES, libc::ENOMEM),
    (wf::ERROR_COMMITMENT_LIMIT, libc::ENOMEM),
    (wf::ERROR_WORKING_SET_QUOTA, libc::ENOMEM),
    (wf::ERROR_INVALID_HANDLE, libc::EBADF),
    (wf::ERROR_TOO_MANY_OPEN_FILES, libc::EMFILE),
    (wf::ERROR_BROKEN_PIPE, libc::EPIPE),
    (wf::ERROR_NO_DATA, libc::EPIPE),
    (wf::ERROR_DIR_NOT_EMPTY, libc::ENOTEMPTY),
    (wf::ERROR_FILENAME_EXCED_RANGE, libc::ENAMETOOLONG),
    (wf::ERROR_NOT_SAME_DEVICE, libc::EXDEV),
    (wf::ERROR_NOT_SUPPORTED, libc::EOPNOTSUPP),
    (wf::ERROR_CALL_NOT_IMPLEMENTED, libc::ENOSYS),
    (wf::ERROR_NOACCESS, libc::EFAULT),
    (wf::ERROR_FILE_TOO_LARGE, libc::EFBIG),
    (wf::ERROR_SEEK, libc::ESPIPE),
    (wf::ERROR_HANDLE_EOF, libc::ENODATA),
];

/// The errno a Windows error code stands for (EIO for one not known).
pub(crate) fn os_code_to_errno(code: i32) -> i32 {
    if code & ERRNO_BIT != 0 {
        return code & 0xffff;
    }
    TABLE
        .iter()
        .find(|(w, _)| *w as i32 == code)
        .map_or(libc::EIO, |(_, e)| *e)
}

/// The Windows error code that stands for `errno`.
pub(crate) fn errno_to_os_code(errno: i32) -> i32 {
    TABLE
        .iter()
        .find(|(_, e)| *e == errno)
        .map_or(ERRNO_BIT | errno, |(w, _)| *w as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_errors_become_fio_errnos() {
        assert_eq!(
            os_code_to_errno(wf::ERROR_FILE_NOT_FOUND as i32),
            libc::ENOENT
        );
        assert_eq!(os_code_to_errno(wf::ERROR_DISK_FULL as i32), libc::ENOSPC);
        assert_eq!(
            os_code_to_errno(wf::ERROR_ACCESS_DENIED as i32),
            libc::EACCES
        );
        assert_eq!(
            os_code_to_errno(wf::ERROR_INVALID_PARAMETER as i32),
            libc::EINVAL
        );
        assert_eq!(os_code_to_errno(999_999), libc::EIO);
        // An errno without a Windows error of its own comes back.
        assert_eq!(
            os_code_to_errno(errno_to_os_code(libc::EILSEQ)),
            libc::EILSEQ
        );
    }
}
