pub type wchar_t = i32;
