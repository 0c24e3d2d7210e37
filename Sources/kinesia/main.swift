import Foundation
import KinesiaCLI

// Everything happens in KinesiaCLI (tested in-process); this file only hands over the arguments
// and returns the exit status.
exit(await Kinesia.main(Array(CommandLine.arguments.dropFirst())))
