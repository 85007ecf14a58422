#include "dpointnet/app/preemption.hpp"

#include <csignal>

namespace dpointnet {

namespace {
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_term, g_old_usr1;
extern "C" void on_signal(int sig) { g_signal = sig; }
}  // namespace

PreemptionGuard::PreemptionGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGUSR1, &sa, &g_old_usr1);
}

PreemptionGuard::~PreemptionGuard() {
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGUSR1, &g_old_usr1, nullptr);
}

int PreemptionGuard::received() { return g_signal; }

const char* PreemptionGuard::name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "a signal";
  }
}

}  // namespace dpointnet
