//! The one mapping of core errors into JavaScript errors: an `Error` whose `code` is the
//! stable string of the contract's table.
//!
//! napi-rs rejects promises with a fixed status as `code`, so async methods return an
//! `Outcome<T>`: it is converted on the JS thread, where a failure becomes a JS `Error`
//! created with our code, and the promise rejects with exactly that object. A
//! `DEVCONTAINER` refusal also carries `refusals`: what the config asked, each with the
//! `trust` fragment that grants it. An error libgit2 raised carries `gitClass` and
//! `gitCode`, libgit2's own names for its class and code (`Reference`, `NotFastForward`).

use napi::bindgen_prelude::{ToNapiValue, TypeName, Unknown};
use napi::{sys, ValueType};

use super::trust::DevcontainerRefusal;
use crate::error::Error as CoreError;

pub struct Outcome<T>(pub Result<T, CoreError>);

impl<T> From<Result<T, CoreError>> for Outcome<T> {
    fn from(result: Result<T, CoreError>) -> Self {
        Outcome(result)
    }
}

impl<T: TypeName> TypeName for Outcome<T> {
    fn type_name() -> &'static str {
        T::type_name()
    }

    fn value_type() -> ValueType {
        T::value_type()
    }
}

impl<T: ToNapiValue> ToNapiValue for Outcome<T> {
    unsafe fn to_napi_value(env: sys::napi_env, value: Self) -> napi::Result<sys::napi_value> {
        match value.0 {
            Ok(v) => unsafe { T::to_napi_value(env, v) },
            Err(err) => {
                let js_error = unsafe { create_coded_error(env, &err)? };
                // An error holding a reference to a JS value rejects with that very value.
                Err(napi::Error::from(unsafe {
                    Unknown::from_raw_unchecked(env, js_error)
                }))
            }
        }
    }
}

unsafe fn create_coded_error(env: sys::napi_env, err: &CoreError) -> napi::Result<sys::napi_value> {
    let code = err.code.as_str();
    let mut js_code = std::ptr::null_mut();
    let mut js_message = std::ptr::null_mut();
    let mut js_error = std::ptr::null_mut();
    napi::check_status!(unsafe {
        sys::napi_create_string_utf8(env, code.as_ptr().cast(), code.len() as isize, &mut js_code)
    })?;
    napi::check_status!(unsafe {
        sys::napi_create_string_utf8(
            env,
            err.message.as_ptr().cast(),
            err.message.len() as isize,
            &mut js_message,
        )
    })?;
    napi::check_status!(unsafe {
        sys::napi_create_error(env, js_code, js_message, &mut js_error)
    })?;
    if !err.refusals.is_empty() {
        let refusals: Vec<DevcontainerRefusal> = err.refusals.iter().map(Into::into).collect();
        let js_refusals = unsafe { Vec::to_napi_value(env, refusals)? };
        napi::check_status!(unsafe {
            sys::napi_set_named_property(env, js_error, c"refusals".as_ptr(), js_refusals)
        })?;
    }
    if let Some(cause) = err.git {
        for (name, value) in [
            (c"gitClass", format!("{:?}", cause.class)),
            (c"gitCode", format!("{:?}", cause.code)),
        ] {
            let mut js_value = std::ptr::null_mut();
            napi::check_status!(unsafe {
                sys::napi_create_string_utf8(
                    env,
                    value.as_ptr().cast(),
                    value.len() as isize,
                    &mut js_value,
                )
            })?;
            napi::check_status!(unsafe {
                sys::napi_set_named_property(env, js_error, name.as_ptr(), js_value)
            })?;
        }
    }
    Ok(js_error)
}

/// The code as napi-rs' status, for synchronous calls, whose errors napi-rs throws with
/// `code` set to the status string.
pub struct Code(pub &'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl From<napi::Status> for Code {
    fn from(status: napi::Status) -> Self {
        Code(match status {
            napi::Status::InvalidArg => "INVALID_ARGUMENT",
            _ => "ENGINE_ERROR",
        })
    }
}

pub fn sync_error(err: CoreError) -> napi::Error<Code> {
    napi::Error::new(Code(err.code.as_str()), err.message)
}
