import Foundation
import KinesiaCLI
import KinesiaSystem

// Under `kinesia up`: stop (SIGTERM) when the supervisor dies, even by SIGKILL.
ParentDeathSignal.adoptFromEnvironment()
// Everything happens in KinesiaCLI (tested in-process); this file only hands over the arguments
// and returns the exit status.
exit(await Kinesia.main(Array(CommandLine.arguments.dropFirst())))
