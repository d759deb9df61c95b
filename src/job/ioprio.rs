//! I/O priority values as Linux encodes them (and fio reports them): the
//! class in the top three bits, a hint in the ten bits above the level
//! and the level in the low three bits (`class << 13 | hint << 3 |
//! level`). A leaf module: the option parsers, the workload, the
//! statistics and the reports all read values through it.

/// Shift of the class in a priority value.
pub const CLASS_SHIFT: u32 = 13;
/// Shift of the hint in a priority value.
pub const HINT_SHIFT: u32 = 3;
/// The real-time class.
pub const CLASS_RT: u32 = 1;
/// The best-effort class.
pub const CLASS_BE: u32 = 2;
/// The highest class number (idle).
pub const MAX_CLASS: u32 = 3;
/// The lowest priority level within a class (0 is the highest).
pub const MAX_LEVEL: u32 = 7;
/// The largest priority hint (ten bits).
pub const MAX_HINT: u32 = (1 << 10) - 1;

/// The value of `class`, `level` and `hint`; class 0 means best effort,
/// as fio takes it.
pub const fn value(class: u32, level: u32, hint: u32) -> u16 {
    let class = if class == 0 { CLASS_BE } else { class };
    ((class << CLASS_SHIFT) | ((hint & MAX_HINT) << HINT_SHIFT) | (level & MAX_LEVEL)) as u16
}

/// The class of a value.
pub const fn class(v: u16) -> u32 {
    (v as u32) >> CLASS_SHIFT
}

/// The level of a value.
pub const fn level(v: u16) -> u32 {
    (v as u32) & MAX_LEVEL
}

/// The hint of a value.
pub const fn hint(v: u16) -> u32 {
    ((v as u32) >> HINT_SHIFT) & MAX_HINT
}

/// Why the kernel refused (EPERM) I/O at priority `v`, when its class
/// is the reason: "" otherwise.
pub fn eperm_reason(v: u16) -> &'static str {
    if class(v) == CLASS_RT {
        " (the real-time I/O priority class needs CAP_SYS_NICE or CAP_SYS_ADMIN)"
    } else {
        ""
    }
}

/// The priority a job's I/O runs at without per-I/O priorities: `prio`
/// and `prioclass` (a level without a class is best effort, a class
/// without a level takes level 0, as in fio); 0 when neither is given,
/// and the job then keeps the priority it inherits.
pub fn job_value(prioclass: Option<u32>, prio: Option<u32>) -> u16 {
    if prioclass.is_none() && prio.is_none() {
        return 0;
    }
    value(prioclass.unwrap_or(0), prio.unwrap_or(0), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_linux_encodes_them() {
        assert_eq!(value(1, 0, 0), 0x2000);
        assert_eq!(value(2, 3, 0), 0x4003);
        assert_eq!(value(3, 7, 0), 0x6007);
        // Class 0 is best effort.
        assert_eq!(value(0, 5, 0), 0x4005);
        assert_eq!(value(1, 2, 1), 0x200a);
        let v = value(1, 6, MAX_HINT);
        assert_eq!((class(v), level(v), hint(v)), (1, 6, MAX_HINT));
    }

    #[test]
    fn the_jobs_own_priority_follows_fio() {
        assert_eq!(job_value(None, None), 0);
        // prio alone: best effort at that level.
        assert_eq!(job_value(None, Some(3)), 0x4003);
        // prioclass alone: level 0 of that class.
        assert_eq!(job_value(Some(1), None), 0x2000);
        assert_eq!(job_value(Some(2), None), 0x4000);
        assert_eq!(job_value(Some(0), None), 0x4000);
        assert_eq!(job_value(Some(3), Some(7)), 0x6007);
    }
}
