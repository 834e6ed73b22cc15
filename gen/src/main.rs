//! vpnbench-gen: a UDP packet generator and receiver that outruns iperf3 (sendmmsg,
//! recvmmsg, UDP GSO/GRO), paced by a token bucket, with sequence numbers and send
//! timestamps for loss, reordering, duplicates and one-way delay.

mod args;
mod client;
mod control;
mod hist;
mod json;
mod net;
mod pacing;
mod receiver;
mod sender;
mod server;
mod summary;
#[cfg(test)]
mod testrng;
mod track;
mod wire;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let code = match args::parse(&argv) {
        Err(args::UsageError(msg)) => {
            eprintln!("vpnbench-gen: error: {msg}");
            2
        }
        Ok(args::Command::Help) => {
            println!("{}", args::USAGE);
            0
        }
        Ok(args::Command::Server(s)) => report(server::run(s).map(|_| 0)),
        Ok(args::Command::Client(c)) => report(client::run(c)),
    };
    std::process::exit(code);
}

fn report(r: Result<i32, String>) -> i32 {
    r.unwrap_or_else(|e| {
        eprintln!("vpnbench-gen: {e}");
        1
    })
}
