//! `kindling shaders`: the WGSL of any kernel variant, by name, so a reader or a bug
//! report can see exactly what a device compiles.

use crate::load::Error;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["list", "key"])))]
pub struct Args {
    /// List every kernel variant's name (one a line; `native` marks those browsers
    /// never run: subgroups, cooperative matrices).
    #[arg(long)]
    list: bool,
    /// Print the WGSL module of the named variant (a name from `--list`).
    #[arg(long, value_name = "NAME")]
    key: Option<String>,
    /// With --key: the form a browser compiles (its hot loops counted to a constant for
    /// Chrome's compiler, comments dropped), not the native one.
    #[arg(long, requires = "key")]
    browser: bool,
}

pub fn run(args: Args) -> Result<(), Error> {
    if args.list {
        for v in kindling_gpu::every_variant() {
            let name = v.key.name();
            match v.browser {
                true => println!("{name}"),
                false => println!("{name}  native"),
            }
        }
        return Ok(());
    }
    let name = args.key.unwrap_or_default();
    match kindling_gpu::find_variant(&name) {
        Ok(v) => {
            // What the op table says about it, as WGSL comments (the module compiles as
            // printed).
            let op = v.key.op.spec();
            println!("// {name}: entry point `{}`, family {:?}, {:?} module", op.entry_point, op.family, op.module);
            println!("// workgroups: {}", op.tuning.describe());
            print!("{}", if args.browser { v.key.browser_source() } else { v.key.source() });
            Ok(())
        }
        Err(close) => {
            Err(format!("no kernel named '{name}'; closest: {} (all: kindling shaders --list)", close.join(", "))
                .into())
        }
    }
}
