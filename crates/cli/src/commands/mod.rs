pub mod bench;
pub mod chat;
pub mod info;
pub mod inspect;
pub mod logits;
pub mod run;
pub mod shaders;
pub mod tokenize;
