// route.cpp: the SimGrid (S4U, 3.32) side of scripts/simgrid/compare.sh.
//
// Builds, programmatically, a full-routing zone whose routes are the chain of links that
// gdrsim's GPUDirect PIX path crosses on the default config (read from a route file written by
// compare.sh), then streams messages over it with a window of messages in flight, as gdrsim's
// streaming run does (perftest -t). Run it with --cfg=network/model:CM02.
//
//   route FILE SIZE_BYTES MESSAGES WINDOW [FLOWS] [--cfg=...]
//
// FILE: one link a line, in the data's direction: `name bandwidth_Bps latency_s shared`, where
// shared is 1 for a link every flow crosses (the receiver's side of an incast) and 0 for a link
// each flow has its own copy of (each sender's host). FLOWS (default 1) senders, each on its own
// host with its own route, send MESSAGES messages of SIZE_BYTES each to one receiving host; each
// flow has its own mailbox and receiving actor, and both sides keep WINDOW communications
// posted. Links are split-duplex (one direction per way, as gdrsim's PCIe and wire channels),
// routes symmetrical, so CM02's cross-traffic (the reverse flow standing for ACKs) takes the
// other direction.
//
// Prints `simulated_s=... messages=... bytes=... GBps=...` when done.

#include <simgrid/s4u.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

XBT_LOG_NEW_DEFAULT_CATEGORY(gdrsim_route, "gdrsim comparison route");

namespace {

struct LinkSpec {
  std::string name;
  double bandwidth; // bytes/s
  double latency;   // s
  bool shared;
};

char token = 0;   // the payload pointer every put sends (contents are never read)
char* sink = nullptr;

// Keeps `window` asynchronous communications posted until `messages` have been: `post` starts
// one (a put on the sender, a get on the receiver), as gdrsim's streaming run keeps its window.
template <typename Post> void keep_posted(long messages, int window, Post post)
{
  std::vector<sg4::CommPtr> pending;
  pending.reserve(window);
  for (long i = 0; i < messages; i++) {
    if (static_cast<int>(pending.size()) >= window) {
      ssize_t done = sg4::Comm::wait_any(pending);
      pending.erase(pending.begin() + done);
    }
    pending.push_back(post());
  }
  sg4::Comm::wait_all(pending);
}

void sender(sg4::Mailbox* mb, double size, long messages, int window)
{
  keep_posted(messages, window, [&] { return mb->put_async(&token, size); });
}

void receiver(sg4::Mailbox* mb, long messages, int window)
{
  keep_posted(messages, window, [&] { return mb->get_async<char>(&sink); });
}

std::vector<LinkSpec> read_route(const std::string& path)
{
  std::ifstream in(path);
  xbt_assert(in, "cannot open route file %s", path.c_str());
  std::vector<LinkSpec> links;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream is(line);
    LinkSpec l;
    int shared = 0;
    is >> l.name >> l.bandwidth >> l.latency >> shared;
    xbt_assert(!is.fail() && l.bandwidth > 0, "bad route line: %s", line.c_str());
    l.shared = shared != 0;
    links.push_back(l);
  }
  xbt_assert(!links.empty(), "route file %s lists no link", path.c_str());
  return links;
}

} // namespace

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv); // consumes --cfg=... and --log=...
  xbt_assert(argc >= 5, "usage: %s FILE SIZE_BYTES MESSAGES WINDOW [FLOWS] [--cfg=network/model:CM02]", argv[0]);
  const std::vector<LinkSpec> spec = read_route(argv[1]);
  const double size                = std::stod(argv[2]);
  const long messages              = std::stol(argv[3]);
  const int window                 = std::max(1, std::stoi(argv[4]));
  const int flows                  = argc > 5 ? std::max(1, std::stoi(argv[5])) : 1;

  auto* zone = sg4::create_full_zone("route");
  sg4::Host* dst = zone->create_host("receiver", 1e9)->seal();

  auto make_link = [zone](const LinkSpec& l, const std::string& name) -> const sg4::Link* {
    return zone->create_split_duplex_link(name, l.bandwidth)->set_latency(l.latency)->seal();
  };
  std::vector<const sg4::Link*> shared(spec.size(), nullptr);
  for (size_t i = 0; i < spec.size(); i++)
    if (spec[i].shared || flows == 1)
      shared[i] = make_link(spec[i], spec[i].name);

  std::vector<sg4::Host*> srcs;
  for (int f = 0; f < flows; f++) {
    sg4::Host* src = zone->create_host("sender" + std::to_string(f), 1e9)->seal();
    std::vector<sg4::LinkInRoute> route;
    for (size_t i = 0; i < spec.size(); i++) {
      const sg4::Link* l = shared[i] ? shared[i] : make_link(spec[i], spec[i].name + "-" + std::to_string(f));
      route.emplace_back(l, sg4::LinkInRoute::Direction::UP);
    }
    zone->add_route(src->get_netpoint(), dst->get_netpoint(), nullptr, nullptr, route, true);
    srcs.push_back(src);
  }
  zone->seal();

  for (int f = 0; f < flows; f++) {
    sg4::Mailbox* mb = sg4::Mailbox::by_name("flow" + std::to_string(f));
    sg4::Actor::create("send" + std::to_string(f), srcs[f], sender, mb, size, messages, window);
    sg4::Actor::create("recv" + std::to_string(f), dst, receiver, mb, messages, window);
  }
  e.run();

  const double t     = sg4::Engine::get_clock();
  const double total = static_cast<double>(messages) * flows;
  std::printf("simulated_s=%.9g messages=%.0f bytes=%.6g GBps=%.6g\n", t, total, total * size,
              t > 0 ? total * size / t / 1e9 : 0.0);
  return 0;
}
